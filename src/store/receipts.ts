import type { Awaitable } from "../model/awaitable.js";

/** Where a receipt's secret is: live, or how it ended (docs/share.md, "Receipts"). */
export type ReceiptEnd = "burned" | "expired" | "deleted";

/** One stored receipt (schema.sql version 21). Times are Unix milliseconds. */
export interface ReceiptRecord {
  /** The public id of its secret. */
  publicId: string;
  createdAt: number;
  expiresAt: number | null;
  maxReads: number | null;
  readCount: number;
  lastReadAt: number | null;
  state: "live" | ReceiptEnd;
  endedAt: number | null;
  /** When the receipt itself goes (after its secret ended); null while live. */
  keepUntil: number | null;
}

/** The `receipts` table, written once for both engines (store/sql/receipts.ts). */
export interface ReceiptStore {
  /** Stores a live receipt for a public secret made in this unit of work. */
  insert(tokenHash: Buffer, r: Pick<ReceiptRecord, "publicId" | "createdAt" | "expiresAt" | "maxReads">): Awaitable<void>;
  /** The receipt of a token's hash, whatever its state. */
  byTokenHash(tokenHash: Buffer): Awaitable<ReceiptRecord | undefined>;
  /** Records a read of the secret: its count after the read and when (Unix ms). No row: nothing. */
  read(publicId: string, readCount: number, at: number): Awaitable<void>;
  /**
   * Records the end of the secret (once: a live row only) at `at` (Unix ms);
   * the receipt is kept until `at` plus the TTL the secret had
   * (expires_at - created_at), or plus `keepWithoutTtlMs` for one without.
   */
  end(publicId: string, state: ReceiptEnd, at: number, keepWithoutTtlMs: number): Awaitable<void>;
  /** Deletes receipts kept past `now` (Unix ms), at most `limit`. @returns how many. */
  pruneKept(now: number, limit: number): Awaitable<number>;
}
