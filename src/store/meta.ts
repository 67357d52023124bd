import type { Awaitable } from "../model/awaitable.js";

/** The `meta` table: named settings of the database (schema.sql section 1). */
export interface MetaStore {
  /** A setting's value, or undefined. */
  get(name: string): Awaitable<string | undefined>;
  /** Writes a setting (insert or replace). */
  set(name: string, value: string): Awaitable<void>;
  /**
   * Writes a setting only if it still holds `expected` (undefined: only if
   * it is absent), in one statement, so that of several nodes racing for it
   * one wins (the ACME renewal lease, docs/deploy.md "Certificates by ACME").
   * @returns true when it was written.
   */
  replaceIf(name: string, expected: string | undefined, value: string): Awaitable<boolean>;
  /** Removes a setting (nothing when absent). */
  remove(name: string): Awaitable<void>;
}
