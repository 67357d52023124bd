import type { Awaitable } from "./work.js";

/**
 * One audit row as stored and chained (schema.sql section 2): `at` in Unix
 * milliseconds, `hash` 64 hex characters over the previous row's hash and
 * this row's other fields (domain/audit-chain.ts).
 */
export interface AuditRow {
  id: number;
  scope: string;
  at: number;
  action: string;
  key: string | null;
  actor: string | null;
  principal_id: string | null;
  ip: string | null;
  /** How many events the row stands for (coalesced failed authentications); null: one. */
  count: number | null;
  hash: string;
}

/** The chain's last row: where the next row links. */
export type AuditHead = Pick<AuditRow, "id" | "at" | "hash">;

/** One page of a scope's rows, newest first, ids in [lo, hi). */
export interface AuditPageQuery {
  scope: string;
  lo: number;
  hi: number;
  /** Exact action, or null for any. */
  action: string | null;
  /** Exact key, or null for any. */
  key: string | null;
  /** Only rows whose key starts with this, or null. */
  keyPrefix: string | null;
  limit: number;
}

/** The append-only `audit` table and its head pointer in `meta`. */
export interface AuditStore {
  /** The row with the highest id, or undefined for an empty log. */
  last(): Awaitable<AuditHead | undefined>;
  /**
   * Inserts chained rows (ids given, in order) and moves the stored head
   * (`meta.audit_head`) to the last of them.
   */
  append(rows: readonly AuditRow[]): Awaitable<void>;
  /** The highest row id, 0 for an empty log. */
  maxId(): Awaitable<number>;
  /** The first row at or after `id` (ids may have gaps), or undefined. */
  firstFrom(id: number): Awaitable<Pick<AuditRow, "id" | "at"> | undefined>;
  /** Rows of one scope with ids in [lo, hi), filtered, newest first. */
  page(query: AuditPageQuery): Awaitable<AuditRow[]>;
}
