import type pg from "pg";
import { GENESIS_HASH, rowHash, segmentsAuthentic } from "../../domain/audit-chain.js";
import type { ChainKeys, ChainSegment } from "../../domain/audit-chain.js";
import type { AuditRow } from "../audit.js";

/** The chain a migration from SQLite writes the SQLite log into (`migrate --from-sqlite`). */
export const SQLITE_CHAIN = "sqlite";

/** Result of walking every chain of a PostgreSQL audit log (`ephemeral-vault audit verify`). */
export type PgChainReport =
  | { ok: true; chains: number; rows: number }
  | { ok: false; chains: number; rows: number; chain: string; seq: number; reason: string };

type StoredRow = AuditRow & { chain: string; seq: number };

/** Rows read per query while walking a chain. */
const PAGE = 1000;

/**
 * Walks every audit chain (one per writer, store/pg/audit.ts) in `seq`
 * order and checks each row's hash against its predecessor's and its own
 * fields (HMAC under the chain's key, found by the chain's first row among
 * the loaded root keys' chain keys), that `seq` has no gap, that times never
 * decrease, and that the chain ends at the head recorded in audit_chains (a
 * cut-off tail). The chain copied from SQLite (SQLITE_CHAIN) is checked
 * with its recorded segments (plain rows written before keying, then keyed
 * segments), whose record must be authentic. Reads only.
 * @param keys the chain keys of the loaded root keys (ValueCipher.auditChainKeys()).
 */
export async function verifyPgAuditChains(pool: pg.Pool, keys: ChainKeys): Promise<PgChainReport> {
  const heads = await pool.query<{ chain: string; seq: number; hash: string }>("SELECT chain, seq, hash FROM audit_chains ORDER BY chain");
  const orphan = await pool.query<{ chain: string }>(
    "SELECT DISTINCT a.chain FROM audit a LEFT JOIN audit_chains c ON c.chain = a.chain WHERE c.chain IS NULL LIMIT 1",
  );
  let rows = 0;
  const fail = (chain: string, seq: number, reason: string): PgChainReport => ({ ok: false, chains: heads.rows.length, rows, chain, seq, reason });
  if (orphan.rows[0] !== undefined) return fail(orphan.rows[0].chain, 1, "rows of a chain without a recorded head");
  const segments = await sqliteSegments(pool, keys);
  for (const head of heads.rows) {
    let prevHash = GENESIS_HASH;
    let prevAt = 0;
    let prevSeq = 0;
    let key: Buffer | null | undefined;
    for (;;) {
      const page = await pool.query<StoredRow>("SELECT * FROM audit WHERE chain = $1 AND seq > $2 ORDER BY seq LIMIT $3", [head.chain, prevSeq, PAGE]);
      for (const row of page.rows) {
        if (row.seq !== prevSeq + 1) return fail(head.chain, prevSeq + 1, "a row is missing (seq has a gap)");
        if (row.at < prevAt) return fail(head.chain, row.seq, "timestamp earlier than the previous row's");
        const content = { id: row.seq, scope: row.scope, at: row.at, action: row.action, key: row.key, actor: row.actor, principal_id: row.principal_id, ip: row.ip, count: row.count };
        if (head.chain === SQLITE_CHAIN && segments !== undefined) {
          if (typeof segments === "string") return fail(head.chain, row.seq, segments);
          key = segmentKey(segments, keys, row.seq);
          if (key === undefined) return fail(head.chain, row.seq, "rows from here are keyed with a root key that is not loaded");
        } else if (key === undefined) {
          key = [...keys.values()].find((k) => rowHash(prevHash, content, k) === row.hash);
          if (key === undefined) return fail(head.chain, row.seq, "the chain is not keyed with any loaded root key (altered, or its key is not loaded)");
        }
        if (rowHash(prevHash, content, key) !== row.hash) {
          return fail(head.chain, row.seq, "hash does not match the row's content and the previous row's hash (row edited, removed or inserted)");
        }
        prevHash = row.hash;
        prevAt = row.at;
        prevSeq = row.seq;
        rows += 1;
      }
      if (page.rows.length < PAGE) break;
    }
    if (prevSeq !== head.seq || prevHash !== head.hash) {
      return fail(head.chain, prevSeq + 1, "rows at the end of the chain are missing (the recorded head is not the last row)");
    }
  }
  return { ok: true, chains: heads.rows.length, rows };
}

/**
 * The segments of the chain copied from SQLite (meta `audit_chain`), checked
 * to be authentic under their last segment's key; undefined when there is
 * none, a reason when the record does not hold.
 */
async function sqliteSegments(pool: pg.Pool, keys: ChainKeys): Promise<ChainSegment[] | string | undefined> {
  const r = await pool.query<{ value: string }>("SELECT value FROM meta WHERE name = 'audit_chain'");
  if (r.rows[0] === undefined) return undefined;
  let record: { segments: ChainSegment[]; mac: string };
  try {
    record = JSON.parse(r.rows[0].value) as { segments: ChainSegment[]; mac: string };
  } catch {
    return "the copied chain's segment record is not valid JSON (altered)";
  }
  const last = record.segments[record.segments.length - 1];
  if (last === undefined || last.key === null) return "the copied chain's segment record does not end with a keyed segment (altered)";
  const lastKey = keys.get(last.key);
  if (lastKey === undefined) return `the copied chain's last segment is keyed with root key ${last.key}, which is not loaded`;
  if (!segmentsAuthentic(lastKey, record.segments, record.mac)) return "the copied chain's segment record is not authentic (altered)";
  return record.segments;
}

/** The chain key of row `seq` of the copied chain: null for a plain segment, undefined when not loaded. */
function segmentKey(segments: ChainSegment[], keys: ChainKeys, seq: number): Buffer | null | undefined {
  let current: ChainSegment | undefined;
  for (const segment of segments) if (segment.from <= seq) current = segment;
  if (current === undefined || current.key === null) return null;
  return keys.get(current.key);
}
