import type Database from "better-sqlite3";
import type pg from "pg";
import type { ValueCipher } from "../crypto/cipher.js";
import { checkAnchor, formatAnchor, SINGLE_CHAIN } from "../domain/audit-anchor.js";
import type { Anchor } from "../domain/audit-anchor.js";
import { verifyAuditChain } from "../store/sqlite/audit-verify.js";
import type { ChainReport } from "../model/audit-verify.js";
import { SQLITE_CHAIN, verifyPgAuditChains } from "../store/pg/audit-verify.js";
import type { PgChainReport } from "../store/pg/audit-verify.js";

/**
 * `audit head` and `audit verify --anchor` (domain/audit-anchor.ts,
 * docs/audit.md): the anchor line of an intact log, and a log checked
 * against one. Both verify the whole chain first.
 */

/** A verification, with the anchor line (`audit head`) or the anchor's verdict (`verify --anchor`). */
export type AnchoredSqlite = { report: ChainReport; line?: string; anchorProblem?: string };
export type AnchoredPg = { report: PgChainReport; line?: string; anchorProblem?: string };

/**
 * Verifies a SQLite log in one read transaction (rows and head from one
 * snapshot, a running vault's later writes left out), then makes its anchor
 * line (`anchor` undefined) or checks it against `anchor`.
 * @param anchor an anchor (parseAnchor), or undefined to make one.
 */
export function anchorSqlite(db: Database.Database, cipher: ValueCipher, anchor: Anchor | undefined): AnchoredSqlite {
  db.exec("BEGIN");
  try {
    const report = verifyAuditChain(db, cipher.auditChainKeys());
    if (!report.ok) return { report };
    const hashAt = db.prepare<[number], { hash: string }>("SELECT hash FROM audit WHERE id = ?");
    if (anchor === undefined) {
      const last = db.prepare<[], { id: number; hash: string }>("SELECT id, hash FROM audit ORDER BY id DESC LIMIT 1").get();
      const heads = last === undefined ? [] : [{ chain: SINGLE_CHAIN, seq: last.id, hash: last.hash }];
      return { report, line: formatAnchor({ engine: "sqlite", at: Date.now(), rows: report.rows, heads }, cipher) };
    }
    const parsed = anchor;
    if (parsed.engine !== "sqlite") return { report, anchorProblem: "the anchor was made on PostgreSQL, not on this SQLite log" };
    return { report, anchorProblem: checkAnchor(parsed, report.rows, (_chain, seq) => hashAt.get(seq)?.hash) };
  } finally {
    db.exec("COMMIT");
  }
}

/**
 * Verifies a PostgreSQL log, then makes its anchor line (the heads read
 * before the walk, so every anchored row was verified) or checks it against
 * `anchor`. An anchor made on SQLite checks the chain `migrate` copied
 * from it (SQLITE_CHAIN).
 */
export async function anchorPg(pool: pg.Pool, cipher: ValueCipher, anchor: Anchor | undefined): Promise<AnchoredPg> {
  const heads = (await pool.query<{ chain: string; seq: number; hash: string }>("SELECT chain, seq, hash FROM audit_chains WHERE seq > 0 ORDER BY chain")).rows;
  const report = await verifyPgAuditChains(pool, cipher.auditChainKeys());
  if (!report.ok) return { report };
  if (anchor === undefined) {
    const rows = heads.reduce((n, h) => n + h.seq, 0);
    return { report, line: formatAnchor({ engine: "postgres", at: Date.now(), rows, heads }, cipher) };
  }
  const parsed = anchor;
  const found = new Map<string, string>();
  for (const head of parsed.heads) {
    const chain = head.chain === SINGLE_CHAIN ? SQLITE_CHAIN : head.chain;
    const r = await pool.query<{ hash: string }>("SELECT hash FROM audit WHERE chain = $1 AND seq = $2", [chain, head.seq]);
    if (r.rows[0] !== undefined) found.set(`${head.chain} ${head.seq}`, r.rows[0].hash);
  }
  return { report, anchorProblem: checkAnchor(parsed, report.rows, (chain, seq) => found.get(`${chain} ${seq}`)) };
}
