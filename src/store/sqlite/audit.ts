import type { Db } from "../../db.js";
import type { AuditHead, AuditPageQuery, AuditRow, AuditStore } from "../audit.js";
import { globPrefix } from "./glob.js";

/** meta row holding `{id, hash}` of the last row: a truncated tail shows in `audit verify`. */
export const HEAD_META = "audit_head";

interface PageParams {
  scope: string;
  lo: number;
  hi: number;
  action: string | null;
  key: string | null;
  glob: string | null;
  limit: number;
}

/**
 * The SQLite audit store: statements prepared once, every method
 * synchronous. Each page query names the index it seeks (a scope, a scope
 * and action, a scope and key; each ends with the rowid, so an id range and
 * ORDER BY id are index seeks).
 */
export class SqliteAuditStore implements AuditStore {
  private readonly q;

  constructor(db: Db) {
    this.q = {
      last: db.prepare<[], AuditHead>("SELECT id, at, hash FROM audit WHERE id = (SELECT max(id) FROM audit)"),
      insert: db.prepare<AuditRow>(
        `INSERT INTO audit (id, scope, at, action, key, actor, principal_id, ip, count, hash)
         VALUES (@id, @scope, @at, @action, @key, @actor, @principal_id, @ip, @count, @hash)`,
      ),
      setHead: db.prepare<[string, string]>(
        "INSERT INTO meta (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value",
      ),
      firstFrom: db.prepare<[number], { id: number; at: number }>("SELECT id, at FROM audit WHERE id >= ? ORDER BY id LIMIT 1"),
      maxId: db.prepare<[], { id: number | null }>("SELECT max(id) AS id FROM audit"),
      byScope: db.prepare<PageParams, AuditRow>(
        `SELECT * FROM audit INDEXED BY audit_scope
         WHERE scope = @scope AND id >= @lo AND id < @hi
           AND (@glob IS NULL OR key GLOB @glob)
         ORDER BY id DESC LIMIT @limit`,
      ),
      byAction: db.prepare<PageParams, AuditRow>(
        `SELECT * FROM audit INDEXED BY audit_scope_action
         WHERE scope = @scope AND action = @action AND id >= @lo AND id < @hi
           AND (@glob IS NULL OR key GLOB @glob)
         ORDER BY id DESC LIMIT @limit`,
      ),
      byKey: db.prepare<PageParams, AuditRow>(
        `SELECT * FROM audit INDEXED BY audit_scope_key
         WHERE scope = @scope AND key = @key AND id >= @lo AND id < @hi
           AND (@action IS NULL OR action = @action) AND (@glob IS NULL OR key GLOB @glob)
         ORDER BY id DESC LIMIT @limit`,
      ),
    };
  }

  last(): AuditHead | undefined {
    return this.q.last.get();
  }

  append(rows: readonly AuditRow[]): void {
    if (rows.length === 0) return;
    for (const row of rows) this.q.insert.run(row);
    const last = rows[rows.length - 1] as AuditRow;
    this.q.setHead.run(HEAD_META, JSON.stringify({ id: last.id, hash: last.hash }));
  }

  maxId(): number {
    return this.q.maxId.get()?.id ?? 0;
  }

  firstFrom(id: number): Pick<AuditRow, "id" | "at"> | undefined {
    return this.q.firstFrom.get(id);
  }

  page(query: AuditPageQuery): AuditRow[] {
    const params: PageParams = {
      scope: query.scope,
      lo: query.lo,
      hi: query.hi,
      action: query.action,
      key: query.key,
      glob: query.keyPrefix === null ? null : globPrefix(query.keyPrefix),
      limit: query.limit,
    };
    const statement = query.key !== null ? this.q.byKey : query.action !== null ? this.q.byAction : this.q.byScope;
    return statement.all(params);
  }
}
