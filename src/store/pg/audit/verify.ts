import type pg from "pg";
import { parseSegments } from "../../../model/audit/chain.js";
import type { ChainKeys, ChainSegment } from "../../../model/audit/chain.js";
import { chainSetMac, headKeyId, macEquals, parseHead } from "../../../model/audit/head.js";
import { CHAIN_SET_META, parseChainSet } from "./chain-set.js";
import type { AuditRow } from "../../audit.js";
import { metaSelect } from "../../sql/meta.js";
import { PgExecutor } from "../executor.js";
import type { MissingKey } from "../../../model/audit/verify.js";
import { ChainWalk, TAIL_MISSING, checkSegments, discoveredKey, segmentKeys } from "../../../model/audit/walk.js";
import type { ChainBreak, KeyResolver } from "../../../model/audit/walk.js";

/** The chain a migration from SQLite writes the SQLite log into (`migrate --from-sqlite`). */
export const SQLITE_CHAIN = "sqlite";

/** Result of walking every chain of a PostgreSQL audit log (`ephemeral-vault audit verify`). */
export type PgChainReport =
  | { ok: true; chains: number; rows: number }
  | { ok: false; chains: number; rows: number; chain: string; seq: number; reason: string; missingKey?: MissingKey };

type StoredRow = AuditRow & { chain: string; seq: number; prev: string | number | null };
/** A chain's head as audit_chains keeps it. */
type Head = { chain: string; seq: number; hash: string; mac: string | null };

/** Rows read per query while walking a chain. */
const PAGE = 1000;

/**
 * Walks every audit chain (one per writer, store/pg/audit/store.ts) in `seq`
 * order and checks each row's hash against its predecessor's and its own
 * fields (HMAC under the chain's key, found by the chain's first row among
 * the loaded root keys' chain keys), that `seq` has no gap, that times never
 * decrease, and that the chain ends at the head recorded in audit_chains (a
 * cut-off tail). The chain copied from SQLite (SQLITE_CHAIN) is checked
 * with its recorded segments (plain rows written before keying, then keyed
 * segments), whose record must be authentic.
 *
 * Heads and the set of chains are authenticated (model/audit/head.ts,
 * store/pg/audit/chain-set.ts): every head must carry a MAC under a loaded
 * chain key over its chain, seq (the row count) and hash, and the chains
 * must be exactly those of the authenticated set, so a tail cut off with
 * its head moved back, a chain removed whole, or every chain removed
 * shows. The one state without a set record that verifies is the one
 * `migrate` leaves before the first start: only the chain copied from
 * SQLite, its head checked against the copied SQLite head. Reads only, in
 * one REPEATABLE READ snapshot; each chain goes through the shared walk
 * (model/audit/walk.ts).
 * @param keys the chain keys of the loaded root keys (ValueCipher.auditChainKeys()).
 */
export async function verifyPgAuditChains(pool: pg.Pool, keys: ChainKeys): Promise<PgChainReport> {
  // One snapshot for every query: heads, the set of chains and rows agree, whatever the nodes write meanwhile.
  const client = await pool.connect();
  try {
    await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    return await verifyIn(client, keys);
  } finally {
    await client.query("COMMIT").catch(() => {});
    client.release();
  }
}

/** verifyPgAuditChains inside its read-only snapshot. */
async function verifyIn(pool: pg.ClientBase, keys: ChainKeys): Promise<PgChainReport> {
  const heads = await pool.query<Head>("SELECT chain, seq, hash, mac FROM audit_chains ORDER BY chain");
  const orphan = await pool.query<{ chain: string }>(
    "SELECT DISTINCT a.chain FROM audit a LEFT JOIN audit_chains c ON c.chain = a.chain WHERE c.chain IS NULL LIMIT 1",
  );
  let rows = 0;
  const fail = (chain: string, seq: number, reason: string, missingKey?: MissingKey): PgChainReport =>
    missingKey === undefined ? { ok: false, chains: heads.rows.length, rows, chain, seq, reason } : { ok: false, chains: heads.rows.length, rows, chain, seq, reason, missingKey };
  if (orphan.rows[0] !== undefined) return fail(orphan.rows[0].chain, 1, "rows of a chain without a recorded head");
  const setProblem = await checkChainSet(pool, keys, heads.rows);
  if (setProblem !== undefined) return fail(setProblem.chain, 1, setProblem.reason);
  const segments = await sqliteSegments(pool, keys);
  // Rows copied from SQLite at or above this seq have their key-chain link under the hash (SQLite schema version 16).
  const prevFrom = Number((await new PgExecutor(pool).get<{ value: string }>(metaSelect("audit_prev_from")))?.value ?? Number.MAX_SAFE_INTEGER);
  for (const head of heads.rows) {
    const linked = head.chain === SQLITE_CHAIN;
    const walk = new ChainWalk(head.chain === SQLITE_CHAIN && segments !== undefined ? copiedKeys(segments, keys) : discoveredKey(keys), true);
    for (;;) {
      const page = await pool.query<StoredRow>("SELECT * FROM audit WHERE chain = $1 AND seq > $2 ORDER BY seq LIMIT $3", [head.chain, walk.last, PAGE]);
      for (const row of page.rows) {
        const fields = { id: row.seq, scope: row.scope, at: row.at, action: row.action, key: row.key, actor: row.actor, principal_id: row.principal_id, ip: row.ip, count: row.count };
        const content = linked && row.seq >= prevFrom ? Object.assign({}, fields, { prev: row.prev === null ? null : Number(row.prev) }) : fields;
        const broken = walk.step({ position: row.seq, at: row.at, hash: row.hash, content });
        if (broken !== undefined) return fail(head.chain, broken.at, broken.reason, broken.missingKey);
        rows += 1;
      }
      if (page.rows.length < PAGE) break;
    }
    if (head.mac === null ? !(await copiedHeadAuthentic(pool, keys, head)) : headKeyId(keys, head.chain, head.seq, head.hash, head.mac) === undefined) {
      return fail(head.chain, head.seq, "the chain's recorded head is not authentic (altered, moved back, or written under a key that is not loaded)");
    }
    if (!walk.endsAt(head.seq, head.hash)) return fail(head.chain, walk.last + 1, TAIL_MISSING);
  }
  return { ok: true, chains: heads.rows.length, rows };
}

/**
 * The segments of the chain copied from SQLite (meta `audit_chain`), checked
 * to be authentic under their last segment's key (model/audit/walk.ts
 * checkSegments); undefined when there is none, the break to report at the
 * chain's first row when the record does not hold.
 */
async function sqliteSegments(pool: pg.ClientBase, keys: ChainKeys): Promise<ChainSegment[] | Omit<ChainBreak, "at"> | undefined> {
  const row = await new PgExecutor(pool).get<{ value: string }>(metaSelect("audit_chain"));
  if (row === undefined) return undefined;
  const record = parseSegments(row.value);
  if (record.mac === "") return { reason: "the copied chain's segment record is not valid (altered)" };
  const check = checkSegments(record, keys);
  if (check.problem === "not-keyed") return { reason: "the copied chain's segment record does not end with a keyed segment (altered)" };
  if (check.problem === "key-not-loaded") {
    return {
      reason: `the copied chain's last segment is keyed with root key ${check.last.key}, which is not loaded`,
      missingKey: { keyId: check.last.key, setting: "VAULT_ENCRYPTION_KEY" },
    };
  }
  if (!check.ok) return { reason: "the copied chain's segment record is not authentic (altered)" };
  return check.segments;
}

/** The keys of the copied chain's rows: by its segments, or its record's problem at the first row. */
function copiedKeys(segments: ChainSegment[] | Omit<ChainBreak, "at">, keys: ChainKeys): KeyResolver {
  if (Array.isArray(segments)) return segmentKeys(segments, keys, "");
  return () => segments;
}

/**
 * Checks the set of chains against its authenticated record (meta
 * audit_chain_set): every recorded chain has a head, every head is
 * recorded. Without a record, only an empty log or the state `migrate`
 * leaves (the copied SQLite chain alone) passes.
 * @returns the first problem, or undefined.
 */
async function checkChainSet(pool: pg.ClientBase, keys: ChainKeys, heads: readonly Head[]): Promise<{ chain: string; reason: string } | undefined> {
  const stored = await new PgExecutor(pool).get<{ value: string }>(metaSelect(CHAIN_SET_META));
  if (stored === undefined) {
    const unrecorded = heads.find((h) => h.chain !== SQLITE_CHAIN);
    if (unrecorded === undefined) {
      const rows = await pool.query("SELECT 1 FROM audit WHERE chain <> $1 LIMIT 1", [SQLITE_CHAIN]);
      if (rows.rows[0] === undefined) return undefined;
    }
    return { chain: unrecorded?.chain ?? "(none)", reason: "the set of chains is not recorded (removed; or a log not yet written by this version: start the vault once)" };
  }
  const record = parseChainSet(stored.value);
  if (record === undefined || ![...keys.values()].some((k) => macEquals(chainSetMac(k, record.chains), record.mac))) {
    return { chain: heads[0]?.chain ?? "(none)", reason: "the set of chains is not authentic (altered, or written under a key that is not loaded)" };
  }
  const present = new Set(heads.map((h) => h.chain));
  const removed = record.chains.find((c) => !present.has(c));
  if (removed !== undefined) return { chain: removed, reason: "a recorded chain is missing (removed whole)" };
  const recorded = new Set(record.chains);
  const extra = heads.find((h) => !recorded.has(h.chain));
  if (extra !== undefined) return { chain: extra.chain, reason: "a chain that is not in the authenticated set of chains" };
  return undefined;
}

/**
 * A head without a MAC is the chain `migrate` copied from SQLite before the
 * first start: it verifies when it is that chain, its SQLite segment record
 * did not sign heads (an older build's) or the copied SQLite head (meta
 * audit_head) is signed and names the same row.
 */
async function copiedHeadAuthentic(pool: pg.ClientBase, keys: ChainKeys, head: Head): Promise<boolean> {
  if (head.chain !== SQLITE_CHAIN) return false;
  const meta = await pool.query<{ name: string; value: string }>("SELECT name, value FROM meta WHERE name IN ('audit_chain', 'audit_head')");
  const value = (name: string) => meta.rows.find((r) => r.name === name)?.value;
  const segmentsValue = value("audit_chain");
  if (segmentsValue === undefined || !parseSegments(segmentsValue).signedHeads) return true;
  const copied = parseHead(value("audit_head") ?? "");
  return copied !== undefined && copied.id === head.seq && copied.hash === head.hash && headKeyId(keys, null, copied.id, copied.hash, copied.mac) !== undefined;
}
