import type { GroupCommit } from "../group-commit.js";
import type { Db } from "../db.js";
import { chainDigest } from "./audit-chain.js";
import { VaultError } from "./errors.js";
import type { EventSink, Origin, SecretEvent } from "./events.js";
import { decodeCursor, encodeCursor } from "../cursor.js";
import { globPrefix } from "./secret-model.js";

/** One audit row to write. Never a secret value (decisions.md section 8). */
export interface AuditRecord {
  /** "global" or an org id: which audit log the row belongs to. */
  scope: string;
  /** secret.read, secret.pruned, key.created, auth.failed, ... (decisions.md section 8). */
  action: string;
  /** The secret key (or public id), the key or webhook id, or null. */
  key: string | null;
  /** "master", a scoped or principal key id, or null (failed authentication, sweeper). */
  actor: string | null;
  principalId: string | null;
  ip: string | null;
}

/** One audit entry as queries return it. `timestamp` in Unix seconds. */
export interface AuditEntry {
  id: string;
  timestamp: number;
  action: string;
  key: string | null;
  actor: string | null;
  principal_id: string | null;
  ip: string | null;
}

/**
 * A query of one scope's audit log (decisions.md sections 3 and 8).
 * `since` and `until` are Unix SECONDS: since inclusive, until exclusive.
 */
export interface AuditFilter {
  since?: number | undefined;
  until?: number | undefined;
  action?: string | undefined;
  /** Exact `key` field. */
  key?: string | undefined;
  /**
   * Only entries whose `key` starts with this (a prefix-scoped admin key sees
   * only its prefix). Served by a scan of the scope, not an index seek.
   */
  keyPrefix?: string | undefined;
  /** Page size, 1 to 1000. */
  limit: number;
  /** The `nextCursor` of the previous page. */
  afterCursor?: string | undefined;
}

export interface AuditPage {
  /** Newest first. */
  entries: AuditEntry[];
  /** Opaque; present when more entries remain. */
  nextCursor: string | null;
}

export interface AuditDeps {
  db: Db;
  /** Current time, Unix milliseconds. */
  now: () => number;
  /**
   * The chain key new rows are MACed with (ValueCipher.auditChainKeys() of
   * the current root key; domain/audit-chain.ts). Undefined: plain SHA-256
   * (only for tools that read the log).
   */
  chainKey?: Buffer | undefined;
}

/** One audit row as stored (schema.sql section 2): `at` in ms, `hash` 64 hex. */
export interface Row {
  id: number;
  scope: string;
  at: number;
  action: string;
  key: string | null;
  actor: string | null;
  principal_id: string | null;
  ip: string | null;
  hash: string;
}

interface QueryParams {
  scope: string;
  lo: number;
  hi: number;
  action: string | null;
  key: string | null;
  glob: string | null;
  limit: number;
}

/** The hash the first row chains to. */
export const GENESIS_HASH = "0".repeat(64);
/** meta row holding `{id, hash}` of the last row: a truncated tail shows in verify. */
export const HEAD_META = "audit_head";
/** Above every row id: an open upper bound. */
const NO_BOUND = Number.MAX_SAFE_INTEGER;

/**
 * The hash of one row over the previous row's hash and the row's content,
 * JSON-encoded so no two different rows encode alike: HMAC-SHA256 under the
 * chain key, or plain SHA-256 when `key` is null (rows written before the
 * chain was keyed; domain/audit-chain.ts).
 * @returns 64 hex characters.
 */
export function rowHash(prevHash: string, row: Omit<Row, "hash">, key: Buffer | null = null): string {
  const content = JSON.stringify([
    prevHash,
    row.id,
    row.scope,
    row.at,
    row.action,
    row.key,
    row.actor,
    row.principal_id,
    row.ip,
  ]);
  return chainDigest(key, content);
}

/**
 * The append-only audit log (decisions.md section 8): global and org entries
 * in one table and one hash chain.
 *
 * - record() writes synchronously inside the caller's transaction (it must
 *   run inside GroupCommit.run): if the row cannot be written, the caller's
 *   change is rolled back with it (fail closed).
 * - As an EventSink it records every secret event in the event's scope, and
 *   prunes as `secret.pruned`.
 * - Timestamps never decrease along the chain (a wall clock that steps back
 *   is absorbed), so a time range is an id range and every query is an index
 *   seek: O(log n + limit).
 * - The database refuses UPDATE and DELETE on the table (schema.sql triggers).
 */
export class AuditLog implements EventSink {
  private readonly q;
  /**
   * The chain's last row as this process last wrote it, or undefined when it
   * must be read from the table (at start, after a rollback). Saves a query
   * per row on the hot path (every read writes a row).
   */
  private head: Pick<Row, "id" | "at" | "hash"> | undefined;
  /** Set by attach(): rows recorded inside its batches are buffered and inserted once per batch, before its COMMIT. */
  private tx: GroupCommit | undefined;
  /** Rows of the open batch, chained and in id order, not yet inserted. */
  private pending: Row[] = [];
  /** pending.length and head when the current request's savepoint opened. */
  private mark = 0;
  private markHead: Pick<Row, "id" | "at" | "hash"> | undefined;

  constructor(private readonly deps: AuditDeps) {
    const db = deps.db;
    this.q = {
      last: db.prepare<[], Pick<Row, "id" | "at" | "hash">>("SELECT id, at, hash FROM audit WHERE id = (SELECT max(id) FROM audit)"),
      insert: db.prepare<Row>(
        `INSERT INTO audit (id, scope, at, action, key, actor, principal_id, ip, hash)
         VALUES (@id, @scope, @at, @action, @key, @actor, @principal_id, @ip, @hash)`,
      ),
      setHead: db.prepare<[string, string]>(
        "INSERT INTO meta (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value",
      ),
      atFromId: db.prepare<[number], { id: number; at: number }>("SELECT id, at FROM audit WHERE id >= ? ORDER BY id LIMIT 1"),
      maxId: db.prepare<[], { id: number | null }>("SELECT max(id) AS id FROM audit"),
      byScope: db.prepare<QueryParams, Row>(
        `SELECT * FROM audit INDEXED BY audit_scope
         WHERE scope = @scope AND id >= @lo AND id < @hi
           AND (@glob IS NULL OR key GLOB @glob)
         ORDER BY id DESC LIMIT @limit`,
      ),
      byAction: db.prepare<QueryParams, Row>(
        `SELECT * FROM audit INDEXED BY audit_scope_action
         WHERE scope = @scope AND action = @action AND id >= @lo AND id < @hi
           AND (@glob IS NULL OR key GLOB @glob)
         ORDER BY id DESC LIMIT @limit`,
      ),
      byKey: db.prepare<QueryParams, Row>(
        `SELECT * FROM audit INDEXED BY audit_scope_key
         WHERE scope = @scope AND key = @key AND id >= @lo AND id < @hi
           AND (@action IS NULL OR action = @action) AND (@glob IS NULL OR key GLOB @glob)
         ORDER BY id DESC LIMIT @limit`,
      ),
    };
  }

  /**
   * Appends one row to the chain, in the caller's transaction. The timestamp
   * is deps.now() (ms), raised to the previous row's if the clock stepped back.
   *
   * Inside a batch of the attached group commit (attach()), the row's id and
   * chain hash are fixed now and the row is buffered: the batch inserts its
   * rows just before its COMMIT, in the same transaction, and a rolled-back
   * savepoint drops its own rows. Otherwise the row is inserted at once.
   * @throws whatever SQLite throws; the caller's change must then roll back.
   */
  record(entry: AuditRecord): void {
    const last = this.head ?? this.q.last.get();
    const row = {
      id: (last?.id ?? 0) + 1,
      scope: entry.scope,
      at: Math.max(this.deps.now(), last?.at ?? 0),
      action: entry.action,
      key: entry.key,
      actor: entry.actor,
      principal_id: entry.principalId,
      ip: entry.ip,
    };
    const full: Row = { ...row, hash: rowHash(last?.hash ?? GENESIS_HASH, row, this.deps.chainKey ?? null) };
    this.head = full;
    if (this.tx?.inBatch === true) {
      this.pending.push(full);
    } else {
      this.q.insert.run(full);
      this.q.setHead.run(HEAD_META, JSON.stringify({ id: full.id, hash: full.hash }));
    }
  }

  /**
   * Ties the log to the group commit: rows are buffered per batch and
   * inserted, with the meta head (which lets `audit verify` notice a cut-off
   * tail), just before the batch's COMMIT and inside its transaction; a
   * request's rolled-back savepoint drops the rows it recorded, a rolled-back
   * batch drops them all and the cached head.
   */
  attach(tx: GroupCommit): void {
    this.tx = tx;
    tx.onSavepoint(() => {
      this.mark = this.pending.length;
      this.markHead = this.head;
    });
    tx.onBeforeCommit(() => {
      const rows = this.pending;
      if (rows.length === 0) return;
      this.pending = [];
      for (const row of rows) this.q.insert.run(row);
      const last = rows[rows.length - 1] as Row;
      this.q.setHead.run(HEAD_META, JSON.stringify({ id: last.id, hash: last.hash }));
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

  /**
   * Records `action` on `key` in `scope` on behalf of a request's origin
   * (actor, principal, ip), and marks a request's origin as audited
   * (`origin.recorded`, see access-guard.ts completeAccessRecord).
   */
  recordFor(origin: Origin, scope: string, action: string, key: string | null): void {
    this.record({ scope, action, key, actor: origin.actor, principalId: origin.principalId, ip: origin.ip });
    if (origin.recorded === false) origin.recorded = true;
  }

  /** EventSink: a secret event becomes the audit row of the same name, in the event's scope. */
  secretEvent(event: SecretEvent, origin: Origin): void {
    this.recordFor(origin, event.scope, event.type, event.key);
  }

  /** EventSink: a prune is recorded as `secret.pruned` (key null), whatever the count. */
  secretsPruned(scope: string, _count: number, origin: Origin): void {
    this.recordFor(origin, scope, "secret.pruned", null);
  }

  /**
   * The id of the first row whose `at` is at or after `atMs`, or NO_BOUND
   * when there is none. `at` never decreases along the chain (id order), so
   * this is a binary search over the primary key: O(log n) seeks, and the
   * table needs no index on `at` (one index less to write per audited
   * request).
   */
  private firstIdAtOrAfter(atMs: number): number {
    let lo = 1;
    let hi = (this.q.maxId.get()?.id ?? 0) + 1;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      const row = this.q.atFromId.get(mid);
      if (row === undefined) {
        hi = mid;
      } else if (row.at >= atMs) {
        hi = Math.min(mid, row.id);
      } else {
        lo = row.id + 1;
      }
    }
    return this.q.atFromId.get(lo)?.id ?? NO_BOUND;
  }

  /**
   * One page of a scope's entries, newest first (decisions.md sections 3 and 8).
   * Time bounds become an id range (timestamps never decrease along the
   * chain); the action or key filter picks its index; so a page costs
   * O(log n + limit) however large the table, except with `keyPrefix`.
   * @throws VaultError "invalid" for a cursor this method did not make (400).
   */
  query(scope: string, filter: AuditFilter): AuditPage {
    const limit = Math.min(Math.max(Math.trunc(filter.limit), 1), 1000);
    let lo = 0;
    let hi = NO_BOUND;
    if (filter.since !== undefined) lo = this.firstIdAtOrAfter(filter.since * 1000);
    if (filter.until !== undefined) hi = this.firstIdAtOrAfter(filter.until * 1000);
    if (filter.afterCursor !== undefined) hi = Math.min(hi, decodeAuditCursor(filter.afterCursor));
    const params: QueryParams = {
      scope,
      lo,
      hi,
      action: filter.action ?? null,
      key: filter.key ?? null,
      glob: filter.keyPrefix !== undefined ? globPrefix(filter.keyPrefix) : null,
      limit: limit + 1,
    };
    const statement =
      filter.key !== undefined ? this.q.byKey : filter.action !== undefined ? this.q.byAction : this.q.byScope;
    const rows = lo >= hi ? [] : statement.all(params);
    const more = rows.length > limit;
    const page = more ? rows.slice(0, limit) : rows;
    const lastRow = page[page.length - 1];
    return {
      entries: page.map(toEntry),
      nextCursor: more && lastRow ? encodeAuditCursor(lastRow.id) : null,
    };
  }
}

function toEntry(row: Row): AuditEntry {
  return {
    id: String(row.id),
    timestamp: Math.floor(row.at / 1000),
    action: row.action,
    key: row.key,
    actor: row.actor,
    principal_id: row.principal_id,
    ip: row.ip,
  };
}

function encodeAuditCursor(id: number): string {
  return encodeCursor("a1", id);
}

function decodeAuditCursor(cursor: string): number {
  const id = decodeCursor("a1", cursor);
  if (id === undefined) throw new VaultError("invalid", "cursor is not valid");
  return id;
}
