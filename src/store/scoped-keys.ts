import type { ScopedKey } from "../model/records.js";
import type { Awaitable } from "../model/awaitable.js";

/** A stored scoped key: its metadata and its position in creation order (the list cursor). */
export interface ScopedKeyRecord extends ScopedKey {
  seq: number;
}

/**
 * The `scoped_keys` table (schema.sql section 2). Only the SHA-256 of a
 * token is stored. Times are Unix milliseconds.
 */
export interface ScopedKeyStore {
  /** Inserts a key with the hex SHA-256 of its token; last_used_at null. */
  insert(key: ScopedKey, tokenHash: string): Awaitable<void>;
  /** The key whose token hashes to `tokenHash`, or undefined. */
  byTokenHash(tokenHash: string): Awaitable<ScopedKeyRecord | undefined>;
  byId(id: string): Awaitable<ScopedKeyRecord | undefined>;
  /**
   * Up to `limit` keys after `afterSeq` in creation order.
   * @param query.keyPrefix only keys whose own prefix starts with this (keys
   *   without a prefix are left out); null: every key.
   */
  page(query: { afterSeq: number; keyPrefix: string | null; limit: number }): Awaitable<ScopedKeyRecord[]>;
  /** Deletes the key (its token stops working). */
  remove(id: string): Awaitable<void>;
  /** Sets last_used_at = now unless it was written after `before` (the debounce guard). */
  touch(id: string, now: number, before: number): Awaitable<void>;
}
