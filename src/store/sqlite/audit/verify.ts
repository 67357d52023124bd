import type { ChainKeys } from "../../../model/audit/chain.js";
import { GENESIS_HASH } from "../../../model/audit/chain.js";
import { HEAD_META, headKeyId, parseHead } from "../../../model/audit/head.js";
import { ChainWalk, TAIL_MISSING, checkSegments, segmentKeys } from "../../../model/audit/walk.js";
import type { WalkState } from "../../../model/audit/walk.js";
import type { ChainReport } from "../../../model/audit/verify.js";
import type { AuditRow as Row } from "../../audit.js";
import { readSegments } from "./chain.js";
import { checkDerived, checkDerivedSince } from "./derived.js";
import { getMeta } from "../db.js";
import type { Db } from "../db.js";

/**
 * Walks the whole chain in id order and checks each row's hash against the
 * previous row's hash and its own content (HMAC under the chain key of the
 * row's segment, or SHA-256 in a legacy plain segment), that timestamps
 * never decrease, that the segment record is authentic, and that the last
 * row is the head recorded in the meta table (a truncated tail). Once the
 * record says heads are signed, the head must carry a MAC under the last
 * segment's key (model/audit/head.ts) and its id must be the row count, so
 * a tail cut off with the head moved back, or every row removed, shows.
 * Rows from meta `audit_prev_from` on (schema.sql version 16) have their
 * key-chain link under the hash. Then checks the spans, links and heads the
 * queries use against the rows (derived.ts), so rows hidden from
 * `GET /audit` show too (docs/audit.md, "What is tamper-evident").
 * Reads only; streams the rows through the shared walk (model/audit/walk.ts),
 * in one read transaction (a consistent snapshot beside a running vault).
 * @param keys the chain keys of the loaded root keys (ValueCipher.auditChainKeys()).
 * @returns the first broken row's id and why, or the row count and head hash.
 */
export function verifyAuditChain(db: Db, keys: ChainKeys): ChainReport {
  return verifyAuditChainFrom(db, keys).report;
}

/**
 * verifyAuditChain, optionally going on from where an earlier check of the
 * same database stood (the console's check, docs/console.md "Audit"): the
 * rows above `from.last` are walked, the head is checked as in a full
 * check, and the derived structures are checked for those rows only (each
 * is in its scope's and its action's spans, and its link names an older row
 * of its key: derived.ts checkDerivedSince). The full derived check
 * (every link, every head, overlapping spans) is `audit verify`'s.
 * @param from a state an earlier call returned; none: the full check.
 * @param maxRows walk at most this many rows: when more remain the answer
 *   has `more` (rows so far hold; head not checked yet): call again from its state.
 * @returns the report, and on success the state to go on from next time.
 */
export function verifyAuditChainFrom(
  db: Db,
  keys: ChainKeys,
  from?: WalkState,
  maxRows = Number.MAX_SAFE_INTEGER,
): { report: ChainReport; state?: WalkState; more?: boolean } {
  const out: { state?: WalkState; more?: boolean } = {};
  const run = () => verifyIn(db, keys, from, out, maxRows);
  const report = db.inTransaction ? run() : db.transaction(run)();
  if (!report.ok || out.state === undefined) return { report };
  return out.more === true ? { report, state: out.state, more: true } : { report, state: out.state };
}

/** The meta row naming the first row whose hash covers its key-chain link (schema.sql version 16). */
export const PREV_FROM_META = "audit_prev_from";

/** verifyAuditChain inside its read transaction. */
function verifyIn(db: Db, keys: ChainKeys, from: WalkState | undefined, out: { state?: WalkState; more?: boolean }, maxRows: number): ChainReport {
  const recorded = readSegments(db);
  if (recorded === undefined) {
    if (db.prepare("SELECT 1 FROM audit LIMIT 1").get() !== undefined) return { ok: false, rows: 0, brokenId: 1, reason: "the chain's segment record is missing: the chain is not keyed (start the vault once to key it)" };
    return { ok: true, rows: 0, head: GENESIS_HASH };
  }
  const check = checkSegments(recorded, keys);
  if (check.problem === "not-keyed") {
    return { ok: false, rows: 0, brokenId: 1, reason: "the chain's segment record does not end with a keyed segment (altered)" };
  }
  if (check.problem === "key-not-loaded") {
    return {
      ok: false,
      rows: 0,
      brokenId: check.last.from,
      reason: `the chain's last segment is keyed with root key ${check.last.key}, which is not loaded (set VAULT_ENCRYPTION_KEY)`,
      missingKey: { keyId: check.last.key, setting: "VAULT_ENCRYPTION_KEY" },
    };
  }
  if (!check.ok) {
    return { ok: false, rows: 0, brokenId: 1, reason: "the chain's segment record is not authentic (altered, or written under another key)" };
  }
  const walk = new ChainWalk(segmentKeys(check.segments, keys, " (add it to VAULT_PREVIOUS_ENCRYPTION_KEYS)"));
  // From this row on each hash covers the row's key-chain link (schema.sql version 16).
  const prevFrom = Number(getMeta(db, PREV_FROM_META) ?? Number.MAX_SAFE_INTEGER);
  if (from !== undefined) walk.resume(from);
  const start = walk.last;
  const iter = db.prepare<[number, number], Row & { prev: number | null }>("SELECT * FROM audit WHERE id > ? ORDER BY id LIMIT ?").iterate(start, maxRows);
  for (const row of iter) {
    const { hash, prev, ...fields } = row;
    const content = row.id >= prevFrom ? Object.assign({}, fields, { prev }) : fields;
    const broken = walk.step({ position: row.id, at: row.at, hash, content });
    if (broken !== undefined) {
      iter.return?.();
      const { at, ...why } = broken;
      return { ok: false, rows: walk.rows, brokenId: at, ...why };
    }
  }
  const { rows, last: lastId } = walk;
  if (lastId - start >= maxRows) {
    // A chunk of an incremental check: its rows' spans and links now, the head once the walk reaches it.
    const derived = checkDerivedSince(db, start, lastId);
    if (derived !== undefined) return { ok: false, rows, brokenId: derived.id, reason: derived.reason };
    out.state = walk.state;
    out.more = true;
    return { ok: true, rows, head: walk.hash };
  }
  const headValue = getMeta(db, HEAD_META);
  const head = headValue === undefined ? undefined : parseHead(headValue);
  if (recorded.signedHeads) {
    // The head is signed (model/audit/head.ts): a tail cut off and the head moved back shows, and so do removed rows.
    if (head === undefined) return { ok: false, rows, brokenId: lastId + 1, reason: "the recorded chain head is missing or unreadable (removed or altered)" };
    if (headKeyId(new Map([[check.last.key, check.lastKey]]), null, head.id, head.hash, head.mac) === undefined) {
      return { ok: false, rows, brokenId: head.id, reason: "the recorded chain head is not authentic (altered, or written under another key)" };
    }
  }
  if (head !== undefined) {
    if (!walk.endsAt(head.id, head.hash) || (recorded.signedHeads && rows !== lastId)) {
      return { ok: false, rows, brokenId: Math.min(head.id, lastId) + 1, reason: TAIL_MISSING };
    }
  } else if (headValue !== undefined || rows > 0) {
    return { ok: false, rows, brokenId: 1, reason: "the recorded chain head is missing" };
  }
  // The rows hold; the structures the queries find them by must match them (derived.ts).
  const derived = from === undefined && maxRows === Number.MAX_SAFE_INTEGER ? checkDerived(db) : checkDerivedSince(db, start, lastId);
  if (derived !== undefined) return { ok: false, rows, brokenId: derived.id, reason: derived.reason };
  out.state = walk.state;
  return { ok: true, rows, head: walk.hash };
}
