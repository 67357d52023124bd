import fc from "fast-check";
import type { AuditPageQuery, AuditRow } from "../../src/store/audit.js";
import { AUDIT_COLUMNS } from "../../src/store/sqlite/audit/key-chain.js";
import type { Db } from "../../src/store/sqlite/db.js";

// What the SQLite audit store's page queries must answer, for the tests that hold its spans and
// key chains to a plain filter over every row (audit-span, audit-key-chain).

/** What queries are drawn from: scopes, actions, keys (null: any key), the rows' times and ids. */
export interface QueryDraw {
  scopes: readonly string[];
  actions: readonly string[];
  keys: fc.Arbitrary<string | null>;
  /** The rows were stored between these times, ms. */
  firstAt: number;
  lastAt: number;
  /** The rows' ids are 1..maxId. */
  maxId: number;
  maxLimit: number;
}

/** A query over rows stored between `firstAt` and `lastAt` (ms) with ids 1..`maxId`. */
export function drawnQuery(d: QueryDraw): fc.Arbitrary<AuditPageQuery> {
  const time = fc.option(fc.integer({ min: d.firstAt - 1000, max: d.lastAt + 1000 }), { nil: undefined });
  return fc.record({
    scope: fc.constantFrom(...d.scopes),
    sinceMs: time,
    untilMs: time,
    beforeId: fc.option(fc.integer({ min: 1, max: d.maxId + 1 }), { nil: undefined }),
    action: fc.option(fc.constantFrom(...d.actions), { nil: null }),
    key: d.keys,
    keyPrefix: fc.option(fc.constantFrom("k", "a/", "0123"), { nil: null }),
    limit: fc.integer({ min: 1, max: d.maxLimit }),
  });
}

/** What a page must hold: every row of the table, filtered one by one, newest first. */
export function expectedPage(rows: AuditRow[], q: AuditPageQuery): AuditRow[] {
  return rows
    .filter(
      (r) =>
        r.scope === q.scope &&
        (q.sinceMs === undefined || r.at >= q.sinceMs) &&
        (q.untilMs === undefined || r.at < q.untilMs) &&
        (q.beforeId === undefined || r.id < q.beforeId) &&
        (q.action === null || r.action === q.action) &&
        (q.key === null || r.key === q.key) &&
        (q.keyPrefix === null || (r.key !== null && r.key.startsWith(q.keyPrefix))),
    )
    .sort((a, b) => b.id - a.id)
    .slice(0, q.limit);
}

/** Every audit row, in id order, with the columns a page answers. */
export function allRows(db: Db): AuditRow[] {
  return db.prepare(`SELECT ${AUDIT_COLUMNS} FROM audit ORDER BY id`).all() as AuditRow[];
}
