import { createHmac, timingSafeEqual } from "node:crypto";
import type { AuditRow } from "../records.js";
import { chainDigest } from "./digest.js";

// Re-exported: the chain's digest and key map live in digest.ts, which head.ts
// builds on too.
export { chainDigest } from "./digest.js";
export type { ChainKeys } from "./digest.js";

/**
 * The keyed audit chain. Each row's hash is HMAC-SHA256 under a chain key
 * derived from the root encryption key by HKDF-SHA256 (RFC 5869, info
 * "ephemeral-vault/v1/audit-chain"), which is never stored in the database:
 * whoever can write the file but has not the key cannot recompute a chain
 * that `audit verify` accepts. Rows written before the chain was keyed keep
 * their plain SHA-256 hashes (a legacy first segment).
 *
 * The segments (which row ids are plain, which are keyed with which root
 * key) are kept in the meta row `audit_chain`, authenticated by an HMAC
 * under the current segment's key, so the record cannot be rewritten to
 * claim the whole chain is plain.
 */

/** A run of rows chained the same way: from row id `from` on, until the next segment. */
export interface ChainSegment {
  from: number;
  /** The root key id (crypto/root-key.ts rootKeyId) whose chain key MACs these rows; null: plain SHA-256 (before keying). */
  key: string | null;
}

/** The meta row holding the segment record. */
export const CHAIN_META = "audit_chain";

/** The hash the first row chains to. */
export const GENESIS_HASH = "0".repeat(64);

/**
 * The hash of one row over the previous row's hash and the row's content,
 * JSON-encoded so no two different rows encode alike: HMAC-SHA256 under the
 * chain key, or plain SHA-256 when `key` is null (rows written before the
 * chain was keyed). `count` is covered only when set (schema version 8), so
 * rows written before it keep their hashes. `prev` (the previous row of the
 * same scope and key, SQLite's key chain) is covered when the row carries
 * the field (rows from the meta `audit_prev_from` on, SQLite schema version
 * 16: docs/audit.md, "What is tamper-evident"), or `link` is given;
 * PostgreSQL's own rows never do.
 * @returns 64 hex characters.
 */
export function rowHash(prevHash: string, row: Omit<AuditRow, "hash"> & { prev?: number | null }, key: Buffer | null = null, link = row.prev): string {
  const fields: unknown[] = [prevHash, row.id, row.scope, row.at, row.action, row.key, row.actor, row.principal_id, row.ip];
  if (row.count !== null && row.count !== undefined) fields.push(row.count);
  // The key-chain link (SQLite schema version 16): an object, so no row of the older rule encodes alike.
  if (link !== undefined) fields.push({ prev: link });
  return chainDigest(key, JSON.stringify(fields));
}

/**
 * The record's MAC: over the segments alone (records written before heads
 * were signed), or over the segments and `signedHeads` (from then on: the
 * flag cannot be removed without the key, so an unsigned head is never
 * accepted again).
 */
export function macOf(key: Buffer, segments: readonly ChainSegment[], signedHeads: boolean): string {
  const content = signedHeads ? JSON.stringify({ segments, signedHeads: true }) : JSON.stringify(segments);
  return createHmac("sha256", key).update(content, "utf8").digest("hex");
}

/** The segment record (meta `audit_chain`). */
export interface SegmentRecord {
  segments: ChainSegment[];
  mac: string;
  /** Set once the chain head is recorded with a MAC (model/audit/head.ts): a head without one is refused. */
  signedHeads: boolean;
}

/** Parses a segment record (also the copy a migration to PostgreSQL keeps); an unreadable one has no segments. */
export function parseSegments(value: string): SegmentRecord {
  try {
    const parsed = JSON.parse(value) as { segments?: unknown; mac?: unknown; signedHeads?: unknown };
    if (!Array.isArray(parsed.segments) || typeof parsed.mac !== "string") return { segments: [], mac: "", signedHeads: false };
    return { segments: parsed.segments as ChainSegment[], mac: parsed.mac, signedHeads: parsed.signedHeads === true };
  } catch {
    return { segments: [], mac: "", signedHeads: false };
  }
}

/** True when `mac` authenticates `segments` (and `signedHeads`) under `key`. */
export function segmentsAuthentic(key: Buffer, segments: readonly ChainSegment[], mac: string, signedHeads = false): boolean {
  const expected = Buffer.from(macOf(key, segments, signedHeads), "hex");
  const given = Buffer.from(mac, "hex");
  return given.length === expected.length && timingSafeEqual(given, expected);
}
