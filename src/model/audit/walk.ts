import { GENESIS_HASH, rowHash, segmentsAuthentic } from "./chain.js";
import type { ChainKeys, ChainSegment, SegmentRecord } from "./chain.js";
import type { MissingKey } from "./verify.js";
import type { AuditRow } from "../records.js";

/*
 * The one walk of an audit chain (docs/audit.md, "Tamper evidence"), shared by
 * SQLite's and PostgreSQL's `audit verify` and by SQLite's openChain. Pure:
 * the engine reads the rows, in order, and hands them to ChainWalk.step();
 * the walk says where the chain breaks. Each engine keeps its own reading,
 * its head record and the wording of its segment-record problems.
 */

/** Where and why a chain does not verify; `missingKey` set when the rows are keyed with a root key not loaded. */
export interface ChainBreak {
  /** The row's position: SQLite id, PostgreSQL seq. */
  at: number;
  reason: string;
  missingKey?: MissingKey;
}

/** One stored row as the walk sees it. */
export interface WalkRow {
  /** The row's position in its chain, 1..n (SQLite id, PostgreSQL seq). */
  position: number;
  at: number;
  hash: string;
  /** What the hash covers (model/audit/chain.ts rowHash); its id is the position. */
  content: Omit<AuditRow, "hash"> & { prev?: number | null };
}

/** How far a walk got: rows verified, the last one's position, hash and time (milliseconds). */
export interface WalkState {
  rows: number;
  last: number;
  hash: string;
  time: number;
}

/** The chain key of a row (null: a plain segment), or why it has none. */
export type KeyOutcome = Buffer | null | Omit<ChainBreak, "at">;

/** Picks each row's chain key; called once per row, positions increasing. */
export type KeyResolver = (row: WalkRow, prevHash: string) => KeyOutcome;

/** The reason given when a row's hash does not hold. */
export const HASH_MISMATCH = "hash does not match the row's content and the previous row's hash (row edited, removed or inserted)";
/** The reason given when the recorded head is behind the last row, or past it. */
export const TAIL_MISSING = "rows at the end of the chain are missing (the recorded head is not the last row)";

/** The outcome of checking a segment record against the loaded keys (checkSegments). */
export type SegmentCheck =
  | { ok: true; problem?: undefined; segments: ChainSegment[]; last: ChainSegment & { key: string }; lastKey: Buffer }
  | { ok: false; problem: "not-keyed" }
  | { ok: false; problem: "key-not-loaded"; last: ChainSegment & { key: string } }
  | { ok: false; problem: "not-authentic" };

/**
 * Checks a segment record (model/audit/chain.ts): it must end with a keyed
 * segment whose root key is loaded, and its MAC must hold under that key.
 * @param keys the chain keys of the loaded root keys, by root key id.
 */
export function checkSegments(record: SegmentRecord, keys: ChainKeys): SegmentCheck {
  const last = record.segments[record.segments.length - 1];
  if (last === undefined || last.key === null) return { ok: false, problem: "not-keyed" };
  const keyed = { from: last.from, key: last.key };
  const lastKey = keys.get(last.key);
  if (lastKey === undefined) return { ok: false, problem: "key-not-loaded", last: keyed };
  if (!segmentsAuthentic(lastKey, record.segments, record.mac, record.signedHeads)) return { ok: false, problem: "not-authentic" };
  return { ok: true, segments: record.segments, last: keyed, lastKey };
}

/**
 * A resolver for a chain with an authentic segment record: a row takes the
 * key of the segment it falls in (null in a plain one); a segment whose key
 * is not loaded gives a missing-key break naming it (the record is
 * authentic, so the id is the key those rows were written with).
 * @param hint appended to the missing-key reason (how to load the key).
 */
export function segmentKeys(segments: readonly ChainSegment[], keys: ChainKeys, hint: string): KeyResolver {
  let index = 0;
  return (row) => {
    while (index + 1 < segments.length && (segments[index + 1] as ChainSegment).from <= row.position) index += 1;
    const keyId = segments[index]?.key ?? null;
    if (keyId === null) return null;
    const key = keys.get(keyId);
    if (key !== undefined) return key;
    return {
      reason: `rows from here are keyed with root key ${keyId}, which is not loaded${hint}`,
      missingKey: { keyId, setting: "VAULT_PREVIOUS_ENCRYPTION_KEYS" },
    };
  };
}

/**
 * A resolver for a chain without a segment record (PostgreSQL's own chains):
 * the key is the loaded chain key that makes the first row's hash, and stays
 * that for the rest of the chain.
 * @param found where the key is kept, by its root key id: set when the
 *   first row finds it; already set (a walk resumed from an earlier state,
 *   ChainWalk.resume), the rows walked now are held to that key. An id that
 *   names no loaded key resolves no row.
 */
export function discoveredKey(keys: ChainKeys, found: { keyId?: string } = {}): KeyResolver {
  return (row, prevHash) => {
    if (found.keyId === undefined) {
      for (const [id, k] of keys) {
        if (rowHash(prevHash, row.content, k) === row.hash) {
          found.keyId = id;
          break;
        }
      }
    }
    const key = found.keyId === undefined ? undefined : keys.get(found.keyId);
    return key ?? { reason: "the chain is not keyed with any loaded root key (altered, or its key is not loaded)" };
  };
}

/**
 * Walks one chain row by row: each row's key (the resolver), its time (never
 * before the previous row's) and its hash (over the previous hash and its
 * content). With `gapless`, positions must also run 1, 2, 3... (PostgreSQL's seq).
 */
export class ChainWalk {
  /** Rows verified so far. */
  rows = 0;
  /** The last verified row's position, 0 before any. */
  last = 0;
  /** The last verified row's hash (the genesis hash before any). */
  hash = GENESIS_HASH;
  private time = 0;

  constructor(
    private readonly keyFor: KeyResolver,
    private readonly gapless = false,
  ) {}

  /** Where the walk stands: enough to go on from there later (resume). */
  get state(): WalkState {
    return { rows: this.rows, last: this.last, hash: this.hash, time: this.time };
  }

  /** Goes on from a state a walk over the same chain reached before (an incremental check). */
  resume(state: WalkState): void {
    this.rows = state.rows;
    this.last = state.last;
    this.hash = state.hash;
    this.time = state.time;
  }

  /** Checks the next row. @returns the break, or undefined when the row holds. */
  step(row: WalkRow): ChainBreak | undefined {
    if (this.gapless && row.position !== this.last + 1) return { at: this.last + 1, reason: "a row is missing (seq has a gap)" };
    const key = this.keyFor(row, this.hash);
    if (key !== null && !Buffer.isBuffer(key)) return breakAt(row.position, key);
    if (row.at < this.time) return { at: row.position, reason: "timestamp earlier than the previous row's" };
    if (rowHash(this.hash, row.content, key) !== row.hash) return { at: row.position, reason: HASH_MISMATCH };
    this.rows += 1;
    this.last = row.position;
    this.time = row.at;
    this.hash = row.hash;
    return undefined;
  }

  /** True when the walk ended at the recorded head (`seq` its position, `hash` its hash). */
  endsAt(seq: number, hash: string): boolean {
    return this.last === seq && this.hash === hash;
  }
}

/** A break at `at` with the resolver's reason (and missing key, when set). */
function breakAt(at: number, why: Omit<ChainBreak, "at">): ChainBreak {
  return why.missingKey === undefined ? { at, reason: why.reason } : { at, reason: why.reason, missingKey: why.missingKey };
}
