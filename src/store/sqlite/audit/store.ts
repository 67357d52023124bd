import type { Db } from "../db.js";
import { GENESIS_HASH, rowHash } from "../../../model/audit/chain.js";
import { HEAD_META, headRecord } from "../../../model/audit/head.js";
import type { BatchEvents } from "../group-commit.js";
import type { AuditInsert, AuditPageQuery, AuditRow, AuditStore } from "../../audit.js";
import { globPrefix } from "../glob.js";
import { AUDIT_COLUMNS, KeyChain } from "./key-chain.js";
import { chainedKey } from "../chained-key.js";
import type { KeyLink } from "./key-chain.js";
import { MAX_SPAN_IDS, SpanSet } from "./span.js";
import type { SpanKind } from "./span.js";
import { ReadTally } from "../tally/index.js";
import { metaUpsert } from "../../sql/meta.js";
import { render } from "../../sql/template.js";

export { HEAD_META, MAX_SPAN_IDS };

/** The chain's last row: where the next row links (its hash is set only once the row is inserted). */
type Head = Pick<AuditRow, "id" | "at" | "hash">;

interface PageParams {
  kind: SpanKind;
  scope: string;
  value: string;
  /** Where the walk over spans starts: the lo of the span that may hold `lo`. */
  from: number;
  lo: number;
  hi: number;
  action: string | null;
  key: string | null;
  glob: string | null;
  limit: number;
}

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
 * - The table has no secondary index. Each insert (a batch's rows, or one
 *   row outside a batch) adds spans (table audit_span, schema.sql version
 *   10) for each scope, each scope and action, and each scope and key it
 *   wrote: the id range holding those rows, at most MAX_SPAN_IDS ids. A
 *   batch of 45 reads of one secret writes three spans where per-row
 *   indexes wrote 135 entries, which cost a COMMIT about 6 WAL frames more
 *   (docs/performance-log.md, round six). Keys of a public id's shape get no key
 *   span (random keys: a span per row). Since schema version 13 a key's rows
 *   are chained instead (key-chain.ts): a key span is written only for
 *   rows of a key that no live secret holds the head of, so a read of a
 *   secret adds no page of audit_span to its COMMIT.
 * - Page queries by key follow the key's chain from its newest row, and
 *   its spans below the first row without a link. Other page queries walk
 *   the narrowest spans that hold every match (an action's, else the scope's) newest first and read their id
 *   ranges of the table, filtering the rows: rows come out in id order
 *   without a sort, and a span reads at most 63 rows that do not match.
 *   Time bounds become ids by a binary search over the primary key, so the
 *   table needs no index on `at`.
 */
export class SqliteAuditStore implements AuditStore {
  private readonly q;
  private readonly chain: KeyChain;
  private head: Head | undefined;
  private batch: BatchEvents | undefined;
  /** Rows of the open batch, chained and in id order, not yet inserted. */
  private pending: AuditRow[] = [];
  /** pending.length and head when the current unit's savepoint opened. */
  private mark = 0;
  private markHead: Head | undefined;
  /** The last row this store inserted (its hash chains the next insert), cleared when a batch rolls back. */
  private inserted: { id: number; hash: string } | undefined;

  /**
   * @param db the vault's database.
   * @param chainKey the key rows are MACed with (ValueCipher.auditChainKeys()
   *   of the current root key); null: plain SHA-256 (tools that only read).
   * @param tally the write-behind heads and read counts (shared with the
   *   secrets store; tally/read-tally.ts); by default one of its own, which
   *   defers nothing until attached to a group commit.
   */
  constructor(
    db: Db,
    private readonly chainKey: Buffer | null,
    tally: ReadTally = new ReadTally(db),
  ) {
    this.chain = new KeyChain(db, tally);
    this.q = {
      last: db.prepare<[], Head>("SELECT id, at, hash FROM audit WHERE id = (SELECT max(id) FROM audit)"),
      hashOf: db.prepare<[number], { hash: string }>("SELECT hash FROM audit WHERE id = ?"),
      // Positional parameters: binding by name costs more per row (docs/performance.md).
      insert: db.prepare<[number, string, number, string, string | null, string | null, string | null, string | null, number | null, string, number | null]>(
        `INSERT INTO audit (id, scope, at, action, key, actor, principal_id, ip, count, hash, prev)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      // metaUpsert's text (store/sql/meta.ts); its parameters are the name and the value, in that order.
      setHead: db.prepare<[string, string]>(render(metaUpsert("", ""), "sqlite").text),
      firstFrom: db.prepare<[number], { id: number; at: number }>("SELECT id, at FROM audit WHERE id >= ? ORDER BY id LIMIT 1"),
      maxId: db.prepare<[], { id: number | null }>("SELECT max(id) AS id FROM audit"),
      insertSpan: db.prepare<[SpanKind, string, string, number, number]>(
        "INSERT INTO audit_span (kind, scope, value, lo, hi) VALUES (?, ?, ?, ?, ?)",
      ),
      // The span that starts before `lo` and may reach past it (spans of one kind, scope and value never overlap).
      spanBefore: db.prepare<[SpanKind, string, string, number], { lo: number | null }>(
        "SELECT max(lo) AS lo FROM audit_span WHERE kind = ? AND scope = ? AND value = ? AND lo < ?",
      ),
      // Spans newest first (the primary key, walked backwards), each span's ids newest first (the
      // table's rowid range): rows come out in id order with no sort, and the walk stops at the limit.
      page: db.prepare<PageParams, AuditRow>(
        `SELECT ${AUDIT_COLUMNS.replace(/(\w+)/g, "a.$1")} FROM audit_span AS s CROSS JOIN audit AS a
         WHERE s.kind = @kind AND s.scope = @scope AND s.value = @value AND s.lo >= @from AND s.lo < @hi
           AND a.id >= max(s.lo, @lo) AND a.id <= min(s.hi, @hi - 1)
           AND a.scope = @scope AND (@action IS NULL OR a.action = @action) AND (@key IS NULL OR a.key = @key)
           AND (@glob IS NULL OR a.key GLOB @glob)
         ORDER BY s.lo DESC, a.id DESC LIMIT @limit`,
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
        this.inserted = undefined;
      } else {
        this.pending.length = this.mark;
        this.head = this.markHead;
      }
    });
  }

  append(entry: AuditInsert): void {
    const last = this.head ?? this.q.last.get();
    // The hash is set at insert (insert()): it covers the row's key-chain link, known only then.
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
    const key = query.key;
    if (chainedKey(key)) {
      // A key's rows by its chain (schema.sql version 13), the older ones by its spans.
      const glob = query.keyPrefix;
      const keep = (r: AuditRow) => (query.action === null || r.action === query.action) && (glob === null || key.startsWith(glob));
      return this.chain.page(query.scope, key, { lo, hi, limit: query.limit }, keep, (below, limit) =>
        this.spanPage(query, "k", key, lo, below, limit),
      );
    }
    // The narrowest spans that hold every match: an action's, else the scope's (a public id has no key span).
    return query.action !== null ? this.spanPage(query, "a", query.action, lo, hi, query.limit) : this.spanPage(query, "s", "", lo, hi, query.limit);
  }

  /** The rows of ids lo..hi-1 that match `query`, newest first, by the spans of one kind and value. */
  private spanPage(query: AuditPageQuery, kind: SpanKind, value: string, lo: number, hi: number, limit: number): AuditRow[] {
    const params: PageParams = {
      kind,
      scope: query.scope,
      value,
      from: lo > 0 ? (this.q.spanBefore.get(kind, query.scope, value, lo)?.lo ?? lo) : 0,
      lo,
      hi,
      action: query.action,
      key: query.key,
      glob: query.keyPrefix === null ? null : globPrefix(query.keyPrefix),
      limit,
    };
    return this.q.page.all(params);
  }

  /**
   * Links rows (in id order, their hashes not yet set) to their keys' chains,
   * hashes each over the previous row's hash, its content and its link
   * (docs/audit.md, "What is tamper-evident"), inserts them and their spans,
   * and moves the meta head to the last.
   */
  private insert(rows: AuditRow[]): void {
    const insert = this.q.insert;
    const scopes = new SpanSet();
    const actions = new SpanSet();
    const keys = new SpanSet();
    const first = rows[0] as AuditRow;
    let prevHash =
      this.inserted !== undefined && this.inserted.id === first.id - 1
        ? this.inserted.hash
        : first.id === 1
          ? GENESIS_HASH
          : (this.q.hashOf.get(first.id - 1)?.hash ?? GENESIS_HASH);
    // After every change of the batch: which keys have a live secret to hold their head is settled.
    const links = this.chain.link(rows, (r, prev) => {
      r.hash = rowHash(prevHash, r, this.chainKey, prev);
      prevHash = r.hash;
    });
    rows.forEach((r, i) => {
      const link = links[i] as KeyLink;
      insert.run(r.id, r.scope, r.at, r.action, r.key, r.actor, r.principal_id, r.ip, r.count, r.hash, link.prev);
      scopes.add(r.scope, "", r.id);
      actions.add(r.scope, r.action, r.id);
      if (link.spanned) keys.add(r.scope, r.key as string, r.id);
    });
    this.insertSpans("s", scopes);
    this.insertSpans("a", actions);
    this.insertSpans("k", keys);
    const last = rows[rows.length - 1] as AuditRow;
    this.inserted = { id: last.id, hash: last.hash };
    // One HMAC per insert (a batch's rows): the head is authenticated (model/audit/head.ts).
    this.q.setHead.run(HEAD_META, headRecord(this.chainKey, last.id, last.hash));
  }

  private insertSpans(kind: SpanKind, set: SpanSet): void {
    for (const span of set.spans) this.q.insertSpan.run(kind, span.scope, span.value, span.lo, span.hi);
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
