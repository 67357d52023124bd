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
import type { ChainBreak, KeyResolver, WalkState } from "../../../model/audit/walk.js";

/** The chain a migration from SQLite writes the SQLite log into (`migrate --from-sqlite`). */
export const SQLITE_CHAIN = "sqlite";

/**
 * Result of walking every chain of a PostgreSQL audit log (`ephemeral-vault audit verify`,
 * the console's check): `rows` the rows verified (by this walk, and for a walk that went
 * on from earlier states, by those), `walked` the rows this walk read.
 */
export type PgChainReport =
  | { ok: true; chains: number; rows: number; walked: number }
  | { ok: false; chains: number; rows: number; walked: number; chain: string; seq: number; reason: string; missingKey?: MissingKey };

/**
 * How far a walk verified one chain, to go on from next time (the console's
 * check, docs/console.md "Audit"): the walk's state at the chain's head, and
 * the root key id of the chain key its rows hold under (discoveredKey);
 * undefined for the chain copied from SQLite, keyed by its segment record.
 */
export interface PgChainState {
  state: WalkState;
  keyId: string | undefined;
}

/** Chain name -> the state its last successful walk reached (verifyPgAuditChainsFrom). */
export type PgChainStates = ReadonlyMap<string, PgChainState>;

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
 * (model/audit/walk.ts). This is the full walk, every chain from its first
 * row (`audit verify`); the console's check goes on from earlier states
 * (verifyPgAuditChainsFrom).
 * @param keys the chain keys of the loaded root keys (ValueCipher.auditChainKeys()).
 */
export async function verifyPgAuditChains(pool: pg.Pool, keys: ChainKeys): Promise<PgChainReport> {
  return (await verifyPgAuditChainsFrom(pool, keys)).report;
}

/**
 * verifyPgAuditChains, going on from where an earlier walk of this process
 * stood (the console's check, docs/console.md "Audit"): a chain with a
 * state in `from` is walked from the row after it (seq above the state's
 * last), with the key its earlier rows held under; a chain without one
 * (new since, or `from` absent) from its first row. Everything else is
 * checked as in the full walk, every time: the rows of chains without a
 * head, the authenticated set of chains, the copied chain's segment record,
 * each head's MAC and that each chain ends at its head (a head behind the
 * state already verified is a cut-off tail). The rows below a state are not
 * read again: the table refuses UPDATE and DELETE (schema-pg.sql), and a
 * row altered behind that guard after it was verified is found by the full
 * walk (`audit verify`), not here.
 * @param from the states an earlier call returned; absent: the full walk.
 * @returns the report, and the states to go on from next time: each chain
 *   this walk verified to its head at its new state, every other chain of
 *   `from` still in the log at its old one (a break is never cached).
 */
export async function verifyPgAuditChainsFrom(
  pool: pg.Pool,
  keys: ChainKeys,
  from?: PgChainStates,
): Promise<{ report: PgChainReport; states: Map<string, PgChainState> }> {
  // One snapshot for every query: heads, the set of chains and rows agree, whatever the nodes write meanwhile.
  const client = await pool.connect();
  try {
    await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    return await verifyIn(client, keys, from ?? new Map());
  } finally {
    await client.query("COMMIT").catch(() => {});
    client.release();
  }
}

/** verifyPgAuditChainsFrom inside its read-only snapshot. */
async function verifyIn(
  pool: pg.ClientBase,
  keys: ChainKeys,
  from: PgChainStates,
): Promise<{ report: PgChainReport; states: Map<string, PgChainState> }> {
  const heads = await pool.query<Head>("SELECT chain, seq, hash, mac FROM audit_chains ORDER BY chain");
  const present = new Set(heads.rows.map((h) => h.chain));
  const states = new Map([...from].filter(([chain]) => present.has(chain)));
  let rows = 0;
  let walked = 0;
  const fail = (chain: string, seq: number, reason: string, missingKey?: MissingKey) => {
    const report: PgChainReport = { ok: false, chains: heads.rows.length, rows, walked, chain, seq, reason };
    if (missingKey !== undefined) report.missingKey = missingKey;
    return { report, states };
  };
  const orphan = await pool.query<{ chain: string }>(ORPHAN_ROWS_SQL);
  if (orphan.rows[0] !== undefined) return fail(orphan.rows[0].chain, 1, "rows of a chain without a recorded head");
  const setProblem = await checkChainSet(pool, keys, heads.rows);
  if (setProblem !== undefined) return fail(setProblem.chain, 1, setProblem.reason);
  const segments = await sqliteSegments(pool, keys);
  // Rows copied from SQLite at or above this seq have their key-chain link under the hash (SQLite schema version 16).
  const prevFrom = Number((await new PgExecutor(pool).get<{ value: string }>(metaSelect("audit_prev_from")))?.value ?? Number.MAX_SAFE_INTEGER);
  // Resumed only where the key the earlier rows held under resolves the next ones alike.
  const resumeFrom = (chain: string): PgChainState | undefined => {
    const earlier = states.get(chain);
    if (earlier === undefined) return undefined;
    if (chain === SQLITE_CHAIN && segments !== undefined) return Array.isArray(segments) && earlier.keyId === undefined ? earlier : undefined;
    return earlier.keyId !== undefined && keys.has(earlier.keyId) ? earlier : undefined;
  };
  const resumed = new Map<string, PgChainState>();
  for (const head of heads.rows) {
    const earlier = resumeFrom(head.chain);
    if (earlier !== undefined) resumed.set(head.chain, earlier);
  }
  const grown = await chainsWithRowsAbove(pool, resumed);
  for (const head of heads.rows) {
    const linked = head.chain === SQLITE_CHAIN;
    const copied = linked && segments !== undefined;
    const earlier = resumed.get(head.chain);
    const found: { keyId?: string } = earlier?.keyId === undefined ? {} : { keyId: earlier.keyId };
    const walk = new ChainWalk(copied ? copiedKeys(segments, keys) : discoveredKey(keys, found), true);
    if (earlier !== undefined) walk.resume(earlier.state);
    // A resumed chain with no row above its state has nothing to read (one query above asked for every chain).
    for (let more = earlier === undefined || grown.has(head.chain); more; ) {
      const page = await pool.query<StoredRow>("SELECT * FROM audit WHERE chain = $1 AND seq > $2 ORDER BY seq LIMIT $3", [head.chain, walk.last, PAGE]);
      walked += page.rows.length;
      const broken = walkPage(walk, page.rows, linked ? prevFrom : Number.MAX_SAFE_INTEGER);
      if (broken !== undefined) {
        rows += walk.rows;
        return fail(head.chain, broken.at, broken.reason, broken.missingKey);
      }
      more = page.rows.length === PAGE;
    }
    rows += walk.rows;
    if (head.mac === null ? !(await copiedHeadAuthentic(pool, keys, head)) : headKeyId(keys, head.chain, head.seq, head.hash, head.mac) === undefined) {
      return fail(head.chain, head.seq, "the chain's recorded head is not authentic (altered, moved back, or written under a key that is not loaded)");
    }
    if (!walk.endsAt(head.seq, head.hash)) {
      // Past the head with no row read now: the head was moved back over rows an earlier walk verified, the first of them gone.
      const at = walk.last > head.seq && walk.rows === (earlier?.state.rows ?? 0) ? head.seq + 1 : walk.last + 1;
      return fail(head.chain, at, TAIL_MISSING);
    }
    states.set(head.chain, { state: walk.state, keyId: copied ? undefined : found.keyId });
  }
  return { report: { ok: true, chains: heads.rows.length, rows, walked }, states };
}

/**
 * The first chain that has rows but no head in audit_chains: one index seek
 * per distinct chain (a loose scan of audit's (chain, seq) index), not a
 * scan of every row.
 */
const ORPHAN_ROWS_SQL = `WITH RECURSIVE chains AS (
    SELECT (SELECT chain FROM audit ORDER BY chain LIMIT 1) AS chain
    UNION ALL
    SELECT (SELECT a.chain FROM audit a WHERE a.chain > c.chain ORDER BY a.chain LIMIT 1) FROM chains c WHERE c.chain IS NOT NULL
  )
  SELECT chain FROM chains c WHERE chain IS NOT NULL AND NOT EXISTS (SELECT 1 FROM audit_chains h WHERE h.chain = c.chain) LIMIT 1`;

/**
 * The chains of `resumed` that have rows above their state's last seq: one
 * query for all of them (an index seek each), so a view reads nothing more
 * of a chain that did not grow.
 */
async function chainsWithRowsAbove(pool: pg.ClientBase, resumed: PgChainStates): Promise<Set<string>> {
  if (resumed.size === 0) return new Set();
  const chains = [...resumed.keys()];
  const seqs = chains.map((c) => (resumed.get(c) as PgChainState).state.last);
  const grown = await pool.query<{ chain: string }>(
    "SELECT s.chain FROM unnest($1::text[], $2::bigint[]) AS s(chain, seq) WHERE EXISTS (SELECT 1 FROM audit a WHERE a.chain = s.chain AND a.seq > s.seq)",
    [chains, seqs],
  );
  return new Set(grown.rows.map((r) => r.chain));
}

/**
 * Steps the walk through one page of a chain's rows, in seq order: the
 * per-row code of both the full walk and the one that goes on from an
 * earlier state (verifyPgAuditChainsFrom). Rows at or above `prevFrom` (the
 * copied SQLite chain's rows of SQLite schema version 16 on) have their
 * key-chain link under the hash.
 * @returns the first break, or undefined when every row holds.
 */
function walkPage(walk: ChainWalk, page: readonly StoredRow[], prevFrom: number): ChainBreak | undefined {
  for (const row of page) {
    const fields = { id: row.seq, scope: row.scope, at: row.at, action: row.action, key: row.key, actor: row.actor, principal_id: row.principal_id, ip: row.ip, count: row.count };
    const content = row.seq >= prevFrom ? Object.assign({}, fields, { prev: row.prev === null ? null : Number(row.prev) }) : fields;
    const broken = walk.step({ position: row.seq, at: row.at, hash: row.hash, content });
    if (broken !== undefined) return broken;
  }
  return undefined;
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
