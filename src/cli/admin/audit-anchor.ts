import type { ValueCipher } from "../../crypto/cipher.js";
import { checkAnchor, formatAnchor, SINGLE_CHAIN } from "../../domain/audit/anchor.js";
import type { Anchor } from "../../domain/audit/anchor.js";
import type { ChainReport } from "../../model/audit/verify.js";
import { SQLITE_CHAIN } from "../../store/tools.js";
import type { PgAuditLog, PgChainReport, SqliteAuditLog } from "../../store/tools.js";

/**
 * `audit head` and `audit verify --anchor` (domain/audit/anchor.ts,
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
export function anchorSqlite(log: SqliteAuditLog, cipher: ValueCipher, anchor: Anchor | undefined): AnchoredSqlite {
  return log.snapshot(cipher.auditChainKeys(), (view): AnchoredSqlite => {
    const report = view.report;
    if (!report.ok) return { report };
    if (anchor === undefined) {
      const last = view.last();
      const heads = last === undefined ? [] : [{ chain: SINGLE_CHAIN, seq: last.id, hash: last.hash }];
      return { report, line: formatAnchor({ engine: "sqlite", at: Date.now(), rows: report.rows, heads }, cipher) };
    }
    const parsed = anchor;
    if (parsed.engine !== "sqlite") return { report, anchorProblem: "the anchor was made on PostgreSQL, not on this SQLite log" };
    return { report, anchorProblem: checkAnchor(parsed, report.rows, (_chain, seq) => view.hashAt(seq)) };
  });
}

/**
 * Verifies a PostgreSQL log, then makes its anchor line (the heads read
 * before the walk, so every anchored row was verified) or checks it against
 * `anchor`. An anchor made on SQLite checks the chain `migrate` copied
 * from it (SQLITE_CHAIN).
 */
export async function anchorPg(log: PgAuditLog, cipher: ValueCipher, anchor: Anchor | undefined): Promise<AnchoredPg> {
  const heads = await log.heads();
  const report = await log.verify(cipher.auditChainKeys());
  if (!report.ok) return { report };
  if (anchor === undefined) {
    const rows = heads.reduce((n, h) => n + h.seq, 0);
    return { report, line: formatAnchor({ engine: "postgres", at: Date.now(), rows, heads }, cipher) };
  }
  const parsed = anchor;
  const found = new Map<string, string>();
  for (const head of parsed.heads) {
    const chain = head.chain === SINGLE_CHAIN ? SQLITE_CHAIN : head.chain;
    const hash = await log.hashAt(chain, head.seq);
    if (hash !== undefined) found.set(`${head.chain} ${head.seq}`, hash);
  }
  return { report, anchorProblem: checkAnchor(parsed, report.rows, (chain, seq) => found.get(`${chain} ${seq}`)) };
}
