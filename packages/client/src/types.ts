import type { SharedFile } from "./file-payload.js";
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

/** What share() takes to share a file (docs/share.md, "Files"): its name (a base name), media type and bytes. */
export interface ShareFile {
  file: SharedFile;
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
  /**
   * The sender's receipt, `vrc_` + 54 base64url characters, shown once: it
   * tells whether the link was opened and can destroy it, never read it
   * (client.receipt(), client.destroyByReceipt(); docs/share.md, "Receipts").
   */
  receipt: string;
}

/** What a receipt says (docs/share.md, "Receipts"); times in Unix seconds. */
export interface Receipt {
  /** `waiting` (not read yet), `opened` (read, reads may be left), `burned`, `expired` or `deleted`. */
  state: "waiting" | "opened" | "burned" | "expired" | "deleted";
  createdAt: number;
  /** null: no TTL. */
  expiresAt: number | null;
  /** null: unlimited reads. */
  maxReads: number | null;
  readCount: number;
  /** The last read's time; null before the first. */
  lastReadAt: number | null;
}

/**
 * A request as the API answers it (docs/requests.md), from the OpenAPI
 * document: id (64 hex), url (`<public url>/r/<id>`, the link to send),
 * description, asker, public_key, state (`open` or `answered`), max_reads,
 * ttl_seconds, created_at, expires_at (until when it is open; once answered,
 * until when its answer lives), answered_at, answer_id; times in Unix seconds.
 */
export type SecretRequest = ResponseOf<"/requests/{id}", "get">;

/** A page of requests: `{requests, next_cursor?}`. */
export interface RequestPage {
  requests: SecretRequest[];
  next_cursor?: string | undefined;
}

/** Options of request(): what is asked for, and the answer's limits. */
export interface RequestOptions {
  /** What is asked for, shown to the person asked: 1 to 1000 characters. */
  description: string;
  /** Seconds the request (then its answer) lives; the vault's default 604800 (7 days), at most 2592000. */
  ttlSeconds?: number | undefined;
  /** Reads of the answer before it burns; the vault's default 1. */
  maxReads?: number | undefined;
  /** An org id (a principal key with `c`): POST /orgs/{org}/requests; default the client's `org`; null: global. */
  org?: string | null | undefined;
}

/** What request() resolves: the request and the private key, which only the caller holds. */
export interface MadeRequest {
  id: string;
  /** The link to send to the person who has the secret: `.../r/<id>`. */
  url: string;
  /** The private key (base64url, 96 bytes): keep it; losing it loses the answer. Never sent to the vault. */
  privateKey: string;
  /** `url + "/open#" + privateKey`: opens the answer in a browser (the fragment is never sent). */
  privateUrl: string;
  /** Unix seconds. */
  expiresAt: number;
  /** The whole Request JSON. */
  request: SecretRequest;
}

/** Options of awaitAnswer(). */
export interface AwaitAnswerOptions {
  /** Milliseconds to wait for an answer; 0 or omitted: until answered (or the request is gone). */
  timeoutMs?: number | undefined;
  /** Milliseconds between two polls; default 2000. */
  intervalMs?: number | undefined;
  /** Stops waiting; rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
}

/** One read of a request's answer, opened. */
export interface AnswerRead {
  /** The answer, byte-exact. */
  value: string;
  /** The answer's public secret id. */
  answerId: string;
  readCount: number;
  maxReads: number | null;
  /** Unix seconds, or null. */
  expiresAt: number | null;
  /** This was the answer's last read: it is burned now. */
  spent: boolean;
}
