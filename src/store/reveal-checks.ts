import type { Awaitable } from "../model/awaitable.js";

/**
 * A public secret's reveal check (docs/share.md, "The reveal proof"): the
 * SHA-256 of the proof its link holder sends, the sender's limit of refused
 * proofs and the refusals so far.
 */
export interface RevealCheck {
  /** SHA-256 of the reveal check the client sent at create (32 bytes): never the proof. */
  checkHash: Buffer;
  /** max_failed_reveals: the refusal that reaches it burns the secret; null: no limit. */
  maxFailures: number | null;
  /** Refused proofs so far. */
  failures: number;
}

/**
 * The `reveal_checks` table (schema.sql version 17, schema-pg.sql version 7),
 * keyed by a public secret's id. Written once for both engines
 * (store/sql/reveal-checks.ts).
 */
export interface RevealCheckStore {
  /** Stores the check of a public secret created in this unit of work. */
  insert(key: string, check: RevealCheck): Awaitable<void>;
  /** Whether `key` has a check, without a lock (most reveals are of links without one). */
  has(key: string): Awaitable<boolean>;
  /**
   * Which of `keys` have a check, in one statement for them all, without a
   * lock (the console's Kind of a page of public secrets: docs/console.md,
   * "Secrets"). Empty `keys`: an empty set, no statement.
   * @returns the subset of `keys` that have a row.
   */
  withCheck(keys: readonly string[]): Awaitable<Set<string>>;
  /**
   * The check of `key`, or undefined for none, held until the unit ends, so
   * a proof's check, the read or the refusal it decides, and a concurrent
   * reveal's, run one after the other.
   */
  forReveal(key: string): Awaitable<RevealCheck | undefined>;
  /**
   * Counts one refused proof, guarded: only while the count is below
   * max_failures (or there is none), so no more than max_failures refusals
   * are ever counted.
   * @returns the count after this refusal and the limit, or undefined when
   *   the row is gone or already at its limit (the secret burned).
   */
  countFailure(key: string): Awaitable<{ failures: number; maxFailures: number | null } | undefined>;
  /** Deletes the check of `key` (its secret burned). */
  remove(key: string): Awaitable<void>;
  /**
   * Deletes every check whose public secret is no longer live (expired,
   * burned by an API read, deleted).
   * @returns how many were deleted.
   */
  pruneOrphans(): Awaitable<number>;
}
