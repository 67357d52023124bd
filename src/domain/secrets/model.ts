/**
 * The data of the secret lifecycle (docs/contract.md
 * §5 and §6): its shapes, limits and the pure row helpers. The
 * lifecycle itself is SecretLifecycle in lifecycle.ts; callers import these
 * names from this module.
 */

import { VaultError } from "../../model/errors.js";
import type { SecretEvent, SecretEventType } from "../events.js";
export { DUPLICATE_KEY, GLOBAL_SCOPE, PUBLIC_ID_PATTERN } from "../../model/records.js";
import type { SecretMeta, } from "../../model/records.js";
export type { SecretMeta, SecretState } from "../../model/records.js";

export interface CreateInput {
  scope: string;
  /** The caller's key; undefined makes a public secret with a generated id. */
  key?: string | undefined;
  value: string;
  ttlSeconds?: number | undefined;
  maxReads?: number | undefined;
  /** Org `delete` flag; global secrets always burn. Default true. */
  burnOnLimit?: boolean | undefined;
  ownerId?: string | null | undefined;
  allowedKeys?: string[] | null | undefined;
  /**
   * A public secret's reveal check (docs/share.md, "The reveal proof"):
   * the SHA-256 of the link's proof (32 bytes) and max_failed_reveals (null:
   * no limit). Ignored for a keyed secret.
   */
  revealCheck?: { checkHash: Buffer; maxFailures: number | null } | undefined;
  /**
   * A public secret's `file_meta` (docs/share.md, "The file's metadata
   * before the reveal"): opaque base64url, at most 1,400 characters,
   * checked by the route. Ignored for a keyed secret.
   */
  fileMeta?: string | undefined;
  /**
   * A public secret's id chosen by the caller: a fresh newPublicId() the
   * caller recorded first (a request's answer, docs/requests.md). Ignored
   * for a keyed secret; undefined: a new one.
   */
  publicId?: string | undefined;
}

/**
 * The caps of anonymous links (docs/share.md, "Anonymous links"): live
 * anonymous secrets and their stored bytes, in all and per network (an IPv4
 * address, an IPv6 /48). Bytes are ciphertext bytes as stored.
 */
export interface AnonymousCaps {
  maxSecrets: number;
  maxBytes: number;
  netMaxSecrets: number;
  netMaxBytes: number;
}

/** PUT (docs/api.md "Replace a secret"): a create's input with its key required. */
export type ReplaceInput = CreateInput & { key: string };

/** The answer of a replace, a success either way: a secret created (201) or a live one replaced (200). */
export type ReplaceOutcome = { created: boolean; secret: SecretMeta };

export interface PatchInput {
  ttlSeconds?: number | undefined;
  maxReads?: number | undefined;
}

/** Who reads: for `allowed_keys`. */
export interface Reader {
  /** The principal key id, or null for the master key (always allowed). */
  principalKeyId: string | null;
}

/** A read's answer: the metadata after this read (read_count counted) and the value. */
export interface SecretRead {
  secret: SecretMeta;
  value: string;
}

/** The 404 of a secret that is missing, past its TTL, burned or deleted. */
export const SECRET_NOT_FOUND = "secret not found";

/** The 403 of a reader not in a secret's `allowed_keys` (docs/orgs.md). */
export const NOT_ALLOWED = "this key is not in the secret's allowed_keys";

/** The 410 of a sealed secret, and its message. */
export const SEALED = { error: "secret sealed", message: "its reads are exhausted; PATCH max_reads to reactivate it" } as const;

/**
 * The refusal (404, kind not_found) of a secret found past its TTL but not
 * yet expired. Like every refusal its unit of work changes nothing: the
 * caller expires the secret in a unit of its own
 * (SecretLifecycle.expireKey) before answering, so nothing past its TTL is
 * served and the expiry is recorded at once (docs/architecture.md "How the
 * domain fails"). `scope` and `key` name the secret (never its value).
 */
export class PastTtl extends VaultError {
  constructor(
    readonly scope: string,
    readonly key: string,
  ) {
    super("not_found", SECRET_NOT_FOUND);
  }
}

export interface ListOptions {
  /** Page size, 1 to 1000. */
  limit: number;
  /** Return secrets with a row id above this (cursor). */
  afterId?: number | undefined;
  /** Only keyed secrets whose key starts with this (prefix-scoped keys). */
  keyPrefix?: string | undefined;
  /** Include sealed secrets (org lists). */
  includeSealed?: boolean | undefined;
}

export interface ListPage {
  secrets: SecretMeta[];
  /** Row id to continue after, when more remain. */
  nextAfterId: number | null;
}

/** Largest ttl_seconds (docs/contract.md §5): ten years. */
export const MAX_TTL_SECONDS = 315_360_000;
/** Largest max_reads (docs/contract.md §5). */
export const MAX_READS_LIMIT = 2_147_483_647;

/**
 * A stored secret's metadata, never its ciphertext; its row id as `rowId`
 * (for what is keyed by it, never for an answer). Times stay in milliseconds.
 */
export function toMeta(record: SecretMeta & { id: number; ciphertext: Buffer | null }): SecretMeta {
  return {
    scope: record.scope,
    key: record.key,
    isPublic: record.isPublic,
    state: record.state,
    createdAt: record.createdAt,
    expiresAt: record.expiresAt,
    maxReads: record.maxReads,
    readCount: record.readCount,
    burnOnLimit: record.burnOnLimit,
    ownerId: record.ownerId,
    allowedKeys: record.allowedKeys,
    rowId: record.id,
  };
}

/** Whether a secret's expires_at (Unix ms) has passed at `now` (Unix ms). */
export function isDue(row: Pick<SecretMeta, "expiresAt">, now: number): boolean {
  return row.expiresAt !== null && row.expiresAt <= now;
}

/**
 * Whether `reader` may read a secret by its `allowed_keys` (docs/orgs.md):
 * no list, or a reader that is not a principal key (the master key), may.
 */
export function mayRead(row: Pick<SecretMeta, "allowedKeys">, reader: Reader): boolean {
  if (row.allowedKeys === null || reader.principalKeyId === null) return true;
  return row.allowedKeys.includes(reader.principalKeyId);
}

/**
 * The limits and access of a create or replace input, as stored: expires_at
 * (Unix ms, `now` + ttl_seconds, or null), max_reads (or null), whether the
 * last read burns (default true) and `allowed_keys` (or null: org-wide).
 */
export function limitsOf(input: CreateInput, now: number): { expiresAt: number | null; maxReads: number | null; burnOnLimit: boolean; allowedKeys: string[] | null } {
  return {
    expiresAt: input.ttlSeconds === undefined ? null : now + input.ttlSeconds * 1000,
    maxReads: input.maxReads ?? null,
    burnOnLimit: input.burnOnLimit !== false,
    allowedKeys: input.allowedKeys ?? null,
  };
}

/** The 410 of a sealed secret. */
export function sealed(): VaultError {
  return new VaultError("gone", SEALED.error, { message: SEALED.message });
}

/**
 * The refusals of a live row to a reader, in the read's order: past its TTL
 * (PastTtl), not in `allowed_keys` ("forbidden"), sealed ("gone").
 * `now` in Unix milliseconds.
 * @throws PastTtl (404), VaultError "forbidden" (403) or "gone" (410).
 */
export function refuseUnreadable(row: Pick<SecretMeta, "expiresAt" | "allowedKeys" | "state" | "scope" | "key">, now: number, reader: Reader): void {
  if (isDue(row, now)) throw new PastTtl(row.scope, row.key);
  if (!mayRead(row, reader)) throw new VaultError("forbidden", NOT_ALLOWED);
  if (row.state === "sealed") throw sealed();
}

/** The event of a change to a secret (docs/webhooks.md): its metadata, never its value. */
export function eventOf(type: SecretEventType, meta: SecretMeta): SecretEvent {
  return {
    type,
    scope: meta.scope,
    key: meta.key,
    isPublic: meta.isPublic,
    readCount: meta.readCount,
    maxReads: meta.maxReads,
    expiresAt: meta.expiresAt,
    rowId: meta.rowId,
  };
}
