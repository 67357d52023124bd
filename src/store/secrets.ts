import type { SecretMeta, SecretState } from "../model/records.js";
import type { Awaitable } from "../model/awaitable.js";

/**
 * One stored secret: its metadata, its row id (creation order, the list
 * cursor), its ciphertext (crypto/cipher.ts envelope; null once expired)
 * and its value version. Times are Unix milliseconds.
 */
export interface SecretRecord extends SecretMeta {
  id: number;
  ciphertext: Buffer | null;
  /**
   * The row's value_version (schema.sql version 19): 1 for a new secret,
   * one more at every write of a new ciphertext, 0 for a row not written
   * since that version; bound into the ciphertext's AAD (crypto/aad.ts
   * aadForValue).
   */
  valueVersion: number;
}

/** The value version of a new secret's row (its insert writes it; SecretRecord.valueVersion). */
export const FIRST_VALUE_VERSION = 1;

/**
 * A secret to insert, state active, read_count 0, value version
 * FIRST_VALUE_VERSION (its ciphertext encrypted for it). Times in Unix
 * milliseconds.
 */
export interface NewSecret {
  scope: string;
  key: string;
  isPublic: boolean;
  ciphertext: Buffer;
  now: number;
  expiresAt: number | null;
  maxReads: number | null;
  burnOnLimit: boolean;
  ownerId: string | null;
  allowedKeys: string[] | null;
}

/**
 * The insert's parameters of a new secret, in the column order both engines'
 * INSERT uses: scope, key, is_public, ciphertext, created_at, expires_at,
 * max_reads, burn_on_limit, owner_id, allowed_keys (a JSON array or null).
 */
export function newSecretValues(s: NewSecret): [string, string, number, Buffer, number, number | null, number | null, number, string | null, string | null] {
  const allowedKeys = s.allowedKeys === null ? null : JSON.stringify(s.allowedKeys);
  return [s.scope, s.key, s.isPublic ? 1 : 0, s.ciphertext, s.now, s.expiresAt, s.maxReads, s.burnOnLimit ? 1 : 0, s.ownerId, allowedKeys];
}

/** What the anonymous links hold (SecretStore.anonymousUsage): counts and ciphertext bytes. */
export interface AnonymousUsage {
  count: number;
  bytes: number;
  netCount: number;
  netBytes: number;
}

/** What PATCH changes (docs/contract.md §6). Times in Unix milliseconds. */
export interface SecretPatch {
  expiresAt: number | null;
  maxReads: number | null;
  readCount: number;
  state: SecretState;
}

/**
 * What a replace (PUT) writes over a live secret (docs/api.md "Replace a
 * secret"): a new value and new limits; read_count back to 0, state active,
 * created_at and owner kept. Times in Unix milliseconds.
 */
export interface SecretReplacement {
  /** The new value's envelope, its AAD bound to the row's kept created_at and to `valueVersion`. */
  ciphertext: Buffer;
  /**
   * The value version the ciphertext was encrypted for: the row's version
   * as found plus one. The replace moves the row's version to it in the
   * same statement, and only from the version below it.
   */
  valueVersion: number;
  expiresAt: number | null;
  maxReads: number | null;
  burnOnLimit: boolean;
  allowedKeys: string[] | null;
}

/** A page of a scope's live secrets, oldest first. `now` in Unix milliseconds. */
export interface SecretListQuery {
  scope: string;
  now: number;
  /** Row id of the last secret of the previous page; 0 for the first page. */
  afterId: number;
  /** Sealed secrets too (org lists), else active only. */
  includeSealed: boolean;
  /** Only keyed (not public) secrets whose key starts with this. */
  keyPrefix: string | undefined;
  limit: number;
}

/**
 * The `secrets` table (schema.sql section 1): the SQL of the one secret
 * lifecycle (domain/secrets/lifecycle.ts keeps the decisions). "Live" means state
 * active or sealed.
 */
export interface SecretStore {
  /** The live secret of `key` in `scope`, whether or not past its TTL. */
  live(scope: string, key: string): Awaitable<SecretRecord | undefined>;
  /**
   * live(), for a unit of work that changes what it found (a replace) or
   * explains a read countReadByKey refused: no other unit changes the row
   * until this one commits, so a replace committing meanwhile is waited for
   * and its new version read, never the old value with the new limits or
   * `allowed_keys` (docs/architecture.md, "Engines side by side").
   */
  liveForChange(scope: string, key: string): Awaitable<SecretRecord | undefined>;
  /**
   * Inserts an active secret.
   * @throws VaultError "conflict" when a live secret of the scope has the key
   *   (the unique index decides: two nodes creating it at once get one 201
   *   and one 409).
   */
  insert(secret: NewSecret): Awaitable<SecretRecord>;
  /**
   * Counts one read of the live secret of `key` in `scope`: the read rule
   * (docs/contract.md §6; the guard that makes a burn exactly-once). A read
   * is counted only when every part of the rule lets it: state active, not
   * past its TTL at `now` (Unix ms), readable by `principalKeyId` (its
   * `allowed_keys`; null, the master key: every reader), below max_reads.
   * Each engine states the rule once: PostgreSQL in one statement
   * (store/pg/secrets.ts COUNTED_READ_SQL), SQLite in one guard however its
   * read tally applies the count (store/sqlite/secrets.ts countable). The
   * row returned is the version counted (a replace committed meanwhile is
   * counted and returned whole, never mixed).
   * @returns the secret as counted (read_count after this read), or
   *   undefined when the rule refused or no live row matched: the domain
   *   then looks the row up to tell which (domain/secrets/read.ts).
   */
  countReadByKey(scope: string, key: string, now: number, principalKeyId: string | null): Awaitable<SecretRecord | undefined>;
  /** Deletes the row (burn, delete). */
  remove(id: number): Awaitable<void>;
  /** Sets state sealed. */
  seal(id: number, now: number): Awaitable<void>;
  /** Sets state expired and destroys the ciphertext (a tombstone). */
  expire(id: number, now: number): Awaitable<void>;
  /** Applies a PATCH and returns the updated secret. */
  patch(id: number, patch: SecretPatch, now: number): Awaitable<SecretRecord>;
  /**
   * Replaces a live secret's value and limits in place (same row id,
   * created_at kept, updated_at = now, read_count 0, state active, value
   * version one more, to `replacement.valueVersion`).
   * @returns the updated secret, or undefined when the row is no longer live
   *   (burned or deleted by another node meanwhile) or its value version is
   *   no longer the one below `replacement.valueVersion`.
   */
  replace(id: number, replacement: SecretReplacement, now: number): Awaitable<SecretRecord | undefined>;
  /** Up to `limit` live secrets whose expires_at is at or before `now`, soonest first. */
  due(now: number, limit: number): Awaitable<SecretRecord[]>;
  /** Every live secret of `scope` whose expires_at is at or before `now`. */
  dueInScope(now: number, scope: string): Awaitable<SecretRecord[]>;
  /**
   * Deletes a scope's expired tombstones.
   * @param keyPrefix only keyed secrets whose key starts with this.
   * @returns how many were deleted.
   */
  pruneExpired(scope: string, keyPrefix: string | undefined): Awaitable<number>;
  /**
   * Live secrets, every scope, not past their TTL at `now`, that count
   * against the free tier: every one but the anonymous links (those with an
   * anonymous network: markAnonymous), which have caps of their own
   * (docs/share.md, "Anonymous links").
   */
  countActive(now: number): Awaitable<number>;
  /**
   * Marks secret `id` (just inserted, in this unit of work) as an anonymous
   * link made from network `net` (an IPv4 address or an IPv6 /48,
   * http/pages/anonymous.ts anonymousNet). Schema version 18 (SQLite) / 8
   * (PostgreSQL).
   */
  markAnonymous(id: number, net: string): Awaitable<void>;
  /**
   * The live anonymous links not past their TTL at `now` (Unix ms): how many
   * and their stored ciphertext bytes, in all and of network `net`.
   * Concurrent creates, on this node or another, are counted one after
   * another (the free-tier count's lock).
   */
  anonymousUsage(now: number, net: string): Awaitable<AnonymousUsage>;
  /** Up to `limit` live secrets of a scope not past their TTL, after `afterId`, in id order. */
  list(query: SecretListQuery): Awaitable<SecretRecord[]>;
}
