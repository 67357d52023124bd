import { createHmac, timingSafeEqual } from "node:crypto";
import type { Db } from "../store/sqlite/db.js";
import type { AuditRow } from "../store/audit.js";
import { HEAD_META, headKeyId, headRecord, parseHead } from "./audit-head.js";
import type { RecordedHead } from "./audit-head.js";
import { chainDigest } from "./chain-digest.js";
import type { ChainKeys } from "./chain-digest.js";

// Re-exported: the chain's digest and key map live in chain-digest.ts, which audit-head.ts
// builds on too (no import cycle between the chain and its heads).
export { chainDigest } from "./chain-digest.js";
export type { ChainKeys } from "./chain-digest.js";

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
  /** The root key id (crypto.ts rootKeyId) whose chain key MACs these rows; null: plain SHA-256 (before keying). */
  key: string | null;
}

const CHAIN_META = "audit_chain";

/** The hash the first row chains to. */
export const GENESIS_HASH = "0".repeat(64);

/**
 * The hash of one row over the previous row's hash and the row's content,
 * JSON-encoded so no two different rows encode alike: HMAC-SHA256 under the
 * chain key, or plain SHA-256 when `key` is null (rows written before the
 * chain was keyed). `count` is covered only when set (schema version 8), so
 * rows written before it keep their hashes.
 * @returns 64 hex characters.
 */
export function rowHash(prevHash: string, row: Omit<AuditRow, "hash">, key: Buffer | null = null): string {
  const fields: unknown[] = [prevHash, row.id, row.scope, row.at, row.action, row.key, row.actor, row.principal_id, row.ip];
  if (row.count !== null && row.count !== undefined) fields.push(row.count);
  return chainDigest(key, JSON.stringify(fields));
}

/**
 * The record's MAC: over the segments alone (records written before heads
 * were signed), or over the segments and `signedHeads` (from then on: the
 * flag cannot be removed without the key, so an unsigned head is never
 * accepted again).
 */
function macOf(key: Buffer, segments: readonly ChainSegment[], signedHeads: boolean): string {
  const content = signedHeads ? JSON.stringify({ segments, signedHeads: true }) : JSON.stringify(segments);
  return createHmac("sha256", key).update(content, "utf8").digest("hex");
}

/** The segment record (meta `audit_chain`). */
export interface SegmentRecord {
  segments: ChainSegment[];
  mac: string;
  /** Set once the chain head is recorded with a MAC (domain/audit-head.ts): a head without one is refused. */
  signedHeads: boolean;
}

/** The recorded segments and their MAC, or undefined when the database has none. */
export function readSegments(db: Db): SegmentRecord | undefined {
  const row = db.prepare<[string], { value: string }>("SELECT value FROM meta WHERE name = ?").get(CHAIN_META);
  if (row === undefined) return undefined;
  return parseSegments(row.value);
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

/**
 * Opens the chain for writing with the current root key, at start (and at
 * the end of `rekey`, which has the old and new keys):
 *
 * - no segment record yet: rows already in the table become the plain first
 *   segment, and the keyed one starts after them;
 * - a record authenticated by the key of its last segment: kept when that is
 *   the current key; otherwise (after `rekey`) a new segment for the current
 *   key starts after the last row, and the record is signed anew;
 * - a record that cannot be authenticated (altered, or its last key not
 *   loaded): left as it is, never signed anew, so `audit verify` reports it.
 *
 * The chain head (meta `audit_head`) is then signed under the current key
 * (domain/audit-head.ts): a head signed under a loaded key is signed anew
 * when that is not the current one (after `rekey`); an empty log without a
 * head, before heads are signed, gets the head {id 0, genesis}; an unsigned head is signed once, when the record
 * does not yet say heads are signed (the first start of a build that signs
 * them), and the record then says so. An unsigned head after that, or a
 * head whose MAC no loaded key made, is left as it is for `audit verify`.
 *
 * Runs in its own transaction; call it before any batch.
 * @param keys every loaded root key's chain key, by root key id.
 * @returns whether the record and head are authentic (false: the caller logs it).
 */
export function openChain(db: Db, currentKeyId: string, keys: ChainKeys): boolean {
  const currentKey = keys.get(currentKeyId);
  if (currentKey === undefined) throw new Error("the current root key's chain key is not loaded");
  return db.transaction(() => {
    const next = (db.prepare<[], { id: number | null }>("SELECT max(id) AS id FROM audit").get()?.id ?? 0) + 1;
    const recorded = readSegments(db);
    let segments: ChainSegment[];
    let signedHeads = false;
    if (recorded === undefined) {
      segments = next > 1 ? [{ from: 1, key: null }, { from: next, key: currentKeyId }] : [{ from: 1, key: currentKeyId }];
    } else {
      const last = recorded.segments[recorded.segments.length - 1];
      const lastKey = last?.key === null || last === undefined ? undefined : keys.get(last.key);
      if (last === undefined || lastKey === undefined || !segmentsAuthentic(lastKey, recorded.segments, recorded.mac, recorded.signedHeads)) return false;
      signedHeads = recorded.signedHeads;
      segments =
        last.key === currentKeyId
          ? recorded.segments
          : last.from >= next
            ? [...recorded.segments.slice(0, -1), { from: last.from, key: currentKeyId }]
            : [...recorded.segments, { from: next, key: currentKeyId }];
    }
    const headValue = db.prepare<[string], { value: string }>("SELECT value FROM meta WHERE name = ?").get(HEAD_META)?.value;
    const head = headValue === undefined ? undefined : parseHead(headValue);
    let signed: RecordedHead | undefined;
    if (headValue === undefined) {
      // An empty log's first head; once heads are signed, a missing head is removed, not new.
      if (next === 1 && !signedHeads) signed = { id: 0, hash: GENESIS_HASH };
    } else if (head !== undefined) {
      const keyId = head.mac === undefined ? undefined : headKeyId(keys, null, head.id, head.hash, head.mac);
      if (keyId !== undefined || (head.mac === undefined && !signedHeads)) signed = head;
      if (keyId === currentKeyId && signedHeads && segments === recorded?.segments) return true;
    }
    const upsert = db.prepare("INSERT INTO meta (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value");
    if (signed !== undefined) upsert.run(HEAD_META, headRecord(currentKey, signed.id, signed.hash));
    // A head that does not hold leaves the flag as it was, but a new segment (after `rekey`) is still recorded.
    const flag = signed !== undefined || signedHeads;
    if (signed !== undefined || segments !== recorded?.segments) {
      upsert.run(CHAIN_META, JSON.stringify({ segments, signedHeads: flag, mac: macOf(currentKey, segments, flag) }));
    }
    return signed !== undefined;
  })();
}
