import type { Awaitable } from "../model/awaitable.js";
import type { AuditRow } from "../model/records.js";
export type { AuditRow } from "../model/records.js";

/** A row to append: the store gives it its id, chain position and hash. `at` in Unix milliseconds. */
export type AuditInsert = Omit<AuditRow, "id" | "hash">;

/**
 * One page of a scope's rows, newest first. Times are Unix milliseconds;
 * `beforeId` continues a previous page (rows with a smaller id).
 */
export interface AuditPageQuery {
  scope: string;
  /** Rows at or after this time, inclusive. */
  sinceMs: number | undefined;
  /** Rows before this time, exclusive. */
  untilMs: number | undefined;
  beforeId: number | undefined;
  /** Exact action, or null for any. */
  action: string | null;
  /** Exact key, or null for any. */
  key: string | null;
  /** Only rows whose key starts with this, or null. */
  keyPrefix: string | null;
  limit: number;
}

/**
 * The append-only `audit` table. The hash chain is the engine's: one chain
 * in id order where one process writes, one chain per writer where several
 * do. Either way a row's hash covers the previous row of its chain and
 * its own fields, keyed with the chain key (model/audit/chain.ts), and a
 * row's `at` never goes below its chain predecessor's.
 */
export interface AuditStore {
  /**
   * Appends one row to the chain, in the unit of work's transaction (it is
   * rolled back with it).
   */
  append(row: AuditInsert): Awaitable<void>;
  /** One page of a scope's rows, filtered, newest first. */
  page(query: AuditPageQuery): Awaitable<AuditRow[]>;
}
