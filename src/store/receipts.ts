import type { Awaitable } from "../model/awaitable.js";

/** How a receipt's secret ended (docs/share.md, "Receipts"). */
export type ReceiptEnd = "burned" | "expired" | "deleted";

/** Which receipt: its secret's row id and public id (schema.sql version 21). */
export interface ReceiptKey {
  secretId: number;
  /** 64 hex characters. */
  publicId: string;
}

/** One stored receipt. Times are Unix milliseconds. */
export interface ReceiptRecord extends ReceiptKey {
  /** SHA-256 of the token (32 bytes). */
  tokenHash: Buffer;
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
  insert(r: Pick<ReceiptRecord, "secretId" | "publicId" | "tokenHash" | "createdAt" | "expiresAt" | "maxReads">): Awaitable<void>;
  /** The receipts of secrets with row id `secretId`, whatever their state (more than one: a row id SQLite gave again). */
  bySecretId(secretId: number): Awaitable<ReceiptRecord[]>;
  /** Records a read of the secret: its count after the read and when (Unix ms). No row: nothing. */
  read(key: ReceiptKey, readCount: number, at: number): Awaitable<void>;
  /**
   * Records the end of the secret (once: a live row only) at `at` (Unix ms);
   * the receipt is kept until `at` plus the TTL the secret had
   * (expires_at - created_at), or plus `keepWithoutTtlMs` for one without.
   */
  end(key: ReceiptKey, state: ReceiptEnd, at: number, keepWithoutTtlMs: number): Awaitable<void>;
  /** Deletes receipts kept past `now` (Unix ms), at most `limit`. @returns how many. */
  pruneKept(now: number, limit: number): Awaitable<number>;
}
