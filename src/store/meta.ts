import type { Awaitable } from "../model/awaitable.js";

/** The `meta` table: named settings of the database (schema.sql section 1). */
export interface MetaStore {
  /** A setting's value, or undefined. */
  get(name: string): Awaitable<string | undefined>;
  /** Writes a setting (insert or replace). */
  set(name: string, value: string): Awaitable<void>;
}
