import type { Db } from "../../db.js";
import { GENESIS_HASH, rowHash } from "../../domain/audit-chain.js";
import { PUBLIC_ID_PATTERN } from "../../domain/secret-model.js";
import type { BatchEvents } from "../../group-commit.js";
import type { AuditInsert, AuditPageQuery, AuditRow, AuditStore } from "../audit.js";
import { globPrefix } from "./glob.js";

/** meta row holding `{id, hash}` of the last row: a truncated tail shows in `audit verify`. */
export const HEAD_META = "audit_head";

/** The chain's last row: where the next row links. */
type Head = Pick<AuditRow, "id" | "at" | "hash">;

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
 * The WHERE of the partial index audit_scope_key (schema.sql version 9), word
 * for word: SQLite uses a partial index only for a query that repeats it.
 * True for a key that is not a public id's shape.
 */
const INDEXED_KEY = "NOT (length(key) = 64 AND key NOT GLOB '*[^0-9a-f]*')";

/** Above every row id: an open upper bound. */
const NO_BOUND = Number.MAX_SAFE_INTEGER;

/**
 * The SQLite audit store: one hash chain in id order (schema.sql section 2).
 *
 * - append() fixes the row's id (the head's + 1), its `at` (never below the
 *   head's, so a time range is an id range) and its chain hash at once.
 *   Inside a batch of the attached group commit (attach()) the row is
 *   buffered, and the batch inserts its rows, with the meta head, just
 *   before its COMMIT; a rolled-back savepoint drops its own rows. Outside a
 *   batch the row is inserted at once.
 * - The head is cached (a query per row saved on the hot path) and read back
 *   from the table after a rollback.
 * - Page queries seek an index (a scope, a scope and action, a scope and
 *   key; each ends with the rowid, so an id range and ORDER BY id are index
 *   seeks); time bounds become ids by a binary search over the primary key,
 *   so the table needs no index on `at`. The key index leaves public ids
 *   out (random keys: a WAL page per row); a query by a public id scans the
 *   scope's rows, newest first.
 */
export class SqliteAuditStore implements AuditStore {
  private readonly q;
  private head: Head | undefined;
  private batch: BatchEvents | undefined;
  /** Rows of the open batch, chained and in id order, not yet inserted. */
  private pending: AuditRow[] = [];
  /** pending.length and head when the current unit's savepoint opened. */
  private mark = 0;
  private markHead: Head | undefined;

  /**
   * @param db the vault's database.
   * @param chainKey the key rows are MACed with (ValueCipher.auditChainKeys()
   *   of the current root key); null: plain SHA-256 (tools that only read).
   */
  constructor(
    db: Db,
    private readonly chainKey: Buffer | null,
  ) {
    this.q = {
      last: db.prepare<[], Head>("SELECT id, at, hash FROM audit WHERE id = (SELECT max(id) FROM audit)"),
      // Positional parameters: binding by name costs about 3 us more per row (measured).
      insert: db.prepare<[number, string, number, string, string | null, string | null, string | null, string | null, number | null, string]>(
        `INSERT INTO audit (id, scope, at, action, key, actor, principal_id, ip, count, hash)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
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
         WHERE scope = @scope AND key = @key AND ${INDEXED_KEY} AND id >= @lo AND id < @hi
           AND (@action IS NULL OR action = @action) AND (@glob IS NULL OR key GLOB @glob)
         ORDER BY id DESC LIMIT @limit`,
      ),
      // A public id's rows are not in audit_scope_key (schema.sql version 9): the scope's rows, newest first.
      byPublicKey: db.prepare<PageParams, AuditRow>(
        `SELECT * FROM audit INDEXED BY audit_scope
         WHERE scope = @scope AND id >= @lo AND id < @hi AND key = @key
           AND (@action IS NULL OR action = @action) AND (@glob IS NULL OR key GLOB @glob)
         ORDER BY id DESC LIMIT @limit`,
      ),
    };
  }

  /**
   * Ties the store to the group commit: rows are buffered per batch and
   * inserted, with the meta head (which lets `audit verify` notice a cut-off
   * tail), just before the batch's COMMIT and inside its transaction; a
   * unit's rolled-back savepoint drops the rows it appended, a rolled-back
   * batch drops them all and the cached head.
   */
  attach(tx: BatchEvents): void {
    this.batch = tx;
    tx.onSavepoint(() => {
      this.mark = this.pending.length;
      this.markHead = this.head;
    });
    tx.onBeforeCommit(() => {
      const rows = this.pending;
      if (rows.length === 0) return;
      this.pending = [];
      this.insert(rows);
    });
    tx.onRollback((whole) => {
      if (whole) {
        this.pending = [];
        this.head = undefined;
      } else {
        this.pending.length = this.mark;
        this.head = this.markHead;
      }
    });
  }

  append(entry: AuditInsert): void {
    const last = this.head ?? this.q.last.get();
    // One object per row, filled in place (the hot path: one row per audited request).
    const full: AuditRow = {
      id: (last?.id ?? 0) + 1,
      scope: entry.scope,
      at: Math.max(entry.at, last?.at ?? 0),
      action: entry.action,
      key: entry.key,
      actor: entry.actor,
      principal_id: entry.principal_id,
      ip: entry.ip,
      count: entry.count,
      hash: "",
    };
    full.hash = rowHash(last?.hash ?? GENESIS_HASH, full, this.chainKey);
    this.head = full;
    if (this.batch?.inBatch === true) this.pending.push(full);
    else this.insert([full]);
  }

  page(query: AuditPageQuery): AuditRow[] {
    let lo = 0;
    let hi = NO_BOUND;
    if (query.sinceMs !== undefined) lo = this.firstIdAtOrAfter(query.sinceMs);
    if (query.untilMs !== undefined) hi = this.firstIdAtOrAfter(query.untilMs);
    if (query.beforeId !== undefined) hi = Math.min(hi, query.beforeId);
    if (lo >= hi) return [];
    const params: PageParams = {
      scope: query.scope,
      lo,
      hi,
      action: query.action,
      key: query.key,
      glob: query.keyPrefix === null ? null : globPrefix(query.keyPrefix),
      limit: query.limit,
    };
    const statement =
      query.key !== null
        ? PUBLIC_ID_PATTERN.test(query.key)
          ? this.q.byPublicKey
          : this.q.byKey
        : query.action !== null
          ? this.q.byAction
          : this.q.byScope;
    return statement.all(params);
  }

  /** Inserts chained rows and moves the meta head to the last. */
  private insert(rows: readonly AuditRow[]): void {
    const insert = this.q.insert;
    for (const r of rows) insert.run(r.id, r.scope, r.at, r.action, r.key, r.actor, r.principal_id, r.ip, r.count, r.hash);
    const last = rows[rows.length - 1] as AuditRow;
    this.q.setHead.run(HEAD_META, JSON.stringify({ id: last.id, hash: last.hash }));
  }

  /**
   * The id of the first row whose `at` is at or after `atMs`, or NO_BOUND
   * when there is none: a binary search over the primary key, since `at`
   * never decreases along the chain. O(log n) seeks.
   */
  private firstIdAtOrAfter(atMs: number): number {
    let lo = 1;
    let hi = (this.q.maxId.get()?.id ?? 0) + 1;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      const row = this.q.firstFrom.get(mid);
      if (row === undefined) {
        hi = mid;
      } else if (row.at >= atMs) {
        hi = Math.min(mid, row.id);
      } else {
        lo = row.id + 1;
      }
    }
    return this.q.firstFrom.get(lo)?.id ?? NO_BOUND;
  }
}
