import type { paths } from "./schema.js";

/**
 * Request and response types of the client, taken from the generated
 * OpenAPI types (schema.d.ts) so they follow the server's document.
 */

/** The JSON body of the `status` response of `method` on `path`, as the document describes it. */
export type ResponseOf<P extends keyof paths, M extends keyof paths[P], S extends number = 200> = paths[P][M] extends {
  responses: { [K in S]: { content: { "application/json": infer T } } };
}
  ? T
  : never;

/** The JSON request body of `method` on `path`. */
export type BodyOf<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends {
  requestBody?: { content: { "application/json": infer B } };
}
  ? B
  : never;

/** The query parameters of `method` on `path`. */
export type QueryOf<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends {
  parameters: { query?: infer Q };
}
  ? NonNullable<Q>
  : never;

/** Options of put(): TTL in seconds, read limit, and (org secrets only) seal instead of burn. */
export interface PutOptions {
  /** Time to live, seconds; omitted: no expiry. */
  ttlSeconds?: number | undefined;
  /** Reads before the secret burns (or seals); omitted: unlimited. */
  maxReads?: number | undefined;
  /** Org secrets only: seal (410 on later reads) instead of burning at max_reads; sends `delete: false`. */
  seal?: boolean | undefined;
  /** Org secrets only: principal key ids allowed to read; omitted: the whole org. */
  allowedKeys?: string[] | undefined;
}

/**
 * Options of share(): a public dead drop's TTL in seconds and read limit;
 * `passphrase` adds a second secret the recipient must type; `plain` stores
 * the value itself instead of the end-to-end envelope (docs/share.md).
 */
export interface ShareOptions {
  ttlSeconds?: number | undefined;
  maxReads?: number | undefined;
  passphrase?: string | undefined;
  plain?: boolean | undefined;
  /** The secret burns after this many refused reveal proofs (1-1000; omitted: never). Not with plain. */
  maxFailedReveals?: number | undefined;
}

/** Options of open(): the passphrase when the link was made with one. */
export interface OpenOptions {
  passphrase?: string | undefined;
}

/** Options of patch(): a new TTL counted from now (seconds) and/or a new read limit. */
export interface PatchOptions {
  ttlSeconds?: number | undefined;
  maxReads?: number | undefined;
}

/** Options of list(): `prefix` filters keys (in the client, per page), `limit` 1-1000, `cursor` from the last page. */
export interface ListOptions {
  prefix?: string | undefined;
  limit?: number | undefined;
  cursor?: string | undefined;
}

/** A page query: `limit` 1-1000 and the `cursor` (next_cursor of the previous page). */
export interface PageOptions {
  limit?: number | undefined;
  cursor?: string | undefined;
}

/** The audit filters (docs/audit.md): times in Unix seconds. */
export interface AuditQuery extends PageOptions {
  since?: number | undefined;
  until?: number | undefined;
  action?: string | undefined;
  key?: string | undefined;
}

/** The retrieve body of a global secret (GET /secrets/{key}). */
export type GlobalSecretRead = ResponseOf<"/secrets/{key}", "get">;
/** The retrieve body of an org secret (GET /orgs/{org_id}/secrets/{key}). */
export type OrgSecretRead = ResponseOf<"/orgs/{org_id}/secrets/{key}", "get">;
/** What get() resolves: the whole retrieve body, always with `value`. */
export type SecretRead = (GlobalSecretRead | OrgSecretRead) & { value: string };

/** A page of global secrets' metadata (never values). */
export type GlobalSecretPage = ResponseOf<"/secrets", "get">;
/** A page of an org's secrets' metadata. */
export type OrgSecretPage = ResponseOf<"/orgs/{org_id}/secrets", "get">;
/** One list entry: metadata, never a value. */
export type SecretMeta = (GlobalSecretPage["secrets"][number] | OrgSecretPage["secrets"][number]) & { key?: string };
/** What list() resolves: `{secrets, next_cursor?}`. */
export interface SecretPage {
  secrets: SecretMeta[];
  next_cursor?: string | undefined;
}

/** A public secret's `{id, url}` from share(). */
export interface Shared {
  /** 64 hex characters. */
  id: string;
  /** The shareable link: `<public url>/s/<id>`, with `#<key>` when shared end to end. */
  url: string;
}
