import type { GroupCommit } from "../group-commit.js";
import { decodeCursor, encodeCursor } from "../cursor.js";
import type { AuditHead, AuditRow } from "../store/audit.js";
import type { SqliteAuditStore } from "../store/sqlite/audit.js";
import type { Awaitable, Work } from "../store/work.js";
import { GENESIS_HASH, rowHash } from "./audit-chain.js";
import { VaultError } from "./errors.js";
import type { EventSink, Origin, SecretEvent } from "./events.js";

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
  /** How many events the row stands for (coalesced failed authentications); omitted: one. */
  count?: number | undefined;
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
  /** How many events the entry stands for: 1, or more for coalesced failed authentications. */
  count: number;
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
  /** Current time, Unix milliseconds. */
  now: () => number;
  /**
   * The chain key new rows are MACed with (ValueCipher.auditChainKeys() of
   * the current root key; domain/audit-chain.ts). Undefined: plain SHA-256
   * (only for tools that read the log).
   */
  chainKey?: Buffer | undefined;
}

/** Above every row id: an open upper bound. */
const NO_BOUND = Number.MAX_SAFE_INTEGER;

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
  /**
   * The chain's last row as this process last wrote it, or undefined when it
   * must be read from the table (at start, after a rollback). Saves a query
   * per row on the hot path (every read writes a row).
   */
  private head: AuditHead | undefined;
  /** Set by attach(): rows recorded inside its batches are buffered and inserted once per batch, before its COMMIT. */
  private tx: GroupCommit<Work> | undefined;
  /** Rows of the open batch, chained and in id order, not yet inserted. */
  private pending: AuditRow[] = [];
  /** pending.length and head when the current request's savepoint opened. */
  private mark = 0;
  private markHead: AuditHead | undefined;

  constructor(private readonly deps: AuditDeps) {}

  /**
   * Appends one row to the chain, in the caller's unit of work. The
   * timestamp is deps.now() (ms), raised to the previous row's if the clock
   * stepped back.
   *
   * Inside a batch of the attached group commit (attach()), the row's id and
   * chain hash are fixed now and the row is buffered: the batch inserts its
   * rows just before its COMMIT, in the same transaction, and a rolled-back
   * savepoint drops its own rows. Otherwise the row is inserted at once.
   * Synchronous (returns undefined) when the head is known and the row is
   * buffered: the hot path.
   * @throws whatever the store throws; the caller's change must then roll back.
   */
  record(w: Work, entry: AuditRecord): Awaitable<void> {
    if (this.head !== undefined) return this.chain(w, this.head, entry);
    const last = w.audit.last();
    if (last instanceof Promise) return last.then((head) => this.chain(w, head, entry));
    return this.chain(w, last, entry);
  }

  /** Chains `entry` after `last` and buffers or inserts it. */
  private chain(w: Work, last: AuditHead | undefined, entry: AuditRecord): Awaitable<void> {
    const row = {
      id: (last?.id ?? 0) + 1,
      scope: entry.scope,
      at: Math.max(this.deps.now(), last?.at ?? 0),
      action: entry.action,
      key: entry.key,
      actor: entry.actor,
      principal_id: entry.principalId,
      ip: entry.ip,
      count: entry.count ?? null,
    };
    const full: AuditRow = { ...row, hash: rowHash(last?.hash ?? GENESIS_HASH, row, this.deps.chainKey ?? null) };
    this.head = full;
    if (this.tx?.inBatch === true) {
      this.pending.push(full);
      return undefined;
    }
    return w.audit.append([full]);
  }

  /**
   * Ties the log to the group commit: rows are buffered per batch and
   * inserted, with the meta head (which lets `audit verify` notice a cut-off
   * tail), just before the batch's COMMIT and inside its transaction; a
   * request's rolled-back savepoint drops the rows it recorded, a rolled-back
   * batch drops them all and the cached head.
   */
  attach(tx: GroupCommit<Work>, store: SqliteAuditStore): void {
    this.tx = tx;
    tx.onSavepoint(() => {
      this.mark = this.pending.length;
      this.markHead = this.head;
    });
    tx.onBeforeCommit(() => {
      const rows = this.pending;
      if (rows.length === 0) return;
      this.pending = [];
      store.append(rows);
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
  recordFor(w: Work, origin: Origin, scope: string, action: string, key: string | null): Awaitable<void> {
    if (origin.recorded === false) origin.recorded = true;
    return this.record(w, { scope, action, key, actor: origin.actor, principalId: origin.principalId, ip: origin.ip });
  }

  /** EventSink: a secret event becomes the audit row of the same name, in the event's scope. */
  secretEvent(w: Work, event: SecretEvent, origin: Origin): Awaitable<void> {
    return this.recordFor(w, origin, event.scope, event.type, event.key);
  }

  /** EventSink: a prune is recorded as `secret.pruned` (key null), whatever the count. */
  secretsPruned(w: Work, scope: string, _count: number, origin: Origin): Awaitable<void> {
    return this.recordFor(w, origin, scope, "secret.pruned", null);
  }

  /**
   * The id of the first row whose `at` is at or after `atMs`, or NO_BOUND
   * when there is none. `at` never decreases along the chain (id order), so
   * this is a binary search over the primary key: O(log n) seeks, and the
   * table needs no index on `at` (one index less to write per audited
   * request).
   */
  private async firstIdAtOrAfter(w: Work, atMs: number): Promise<number> {
    let lo = 1;
    let hi = (await w.audit.maxId()) + 1;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      const row = await w.audit.firstFrom(mid);
      if (row === undefined) {
        hi = mid;
      } else if (row.at >= atMs) {
        hi = Math.min(mid, row.id);
      } else {
        lo = row.id + 1;
      }
    }
    return (await w.audit.firstFrom(lo))?.id ?? NO_BOUND;
  }

  /**
   * One page of a scope's entries, newest first (decisions.md sections 3 and 8).
   * Time bounds become an id range (timestamps never decrease along the
   * chain); the action or key filter picks its index; so a page costs
   * O(log n + limit) however large the table, except with `keyPrefix`.
   * @throws VaultError "invalid" for a cursor this method did not make (400).
   */
  async query(w: Work, scope: string, filter: AuditFilter): Promise<AuditPage> {
    const limit = Math.min(Math.max(Math.trunc(filter.limit), 1), 1000);
    let lo = 0;
    let hi = NO_BOUND;
    if (filter.since !== undefined) lo = await this.firstIdAtOrAfter(w, filter.since * 1000);
    if (filter.until !== undefined) hi = await this.firstIdAtOrAfter(w, filter.until * 1000);
    if (filter.afterCursor !== undefined) hi = Math.min(hi, decodeAuditCursor(filter.afterCursor));
    const rows =
      lo >= hi
        ? []
        : await w.audit.page({
            scope,
            lo,
            hi,
            action: filter.action ?? null,
            key: filter.key ?? null,
            keyPrefix: filter.keyPrefix ?? null,
            limit: limit + 1,
          });
    const more = rows.length > limit;
    const page = more ? rows.slice(0, limit) : rows;
    const lastRow = page[page.length - 1];
    return {
      entries: page.map(toEntry),
      nextCursor: more && lastRow ? encodeAuditCursor(lastRow.id) : null,
    };
  }
}

function toEntry(row: AuditRow): AuditEntry {
  return {
    id: String(row.id),
    timestamp: Math.floor(row.at / 1000),
    action: row.action,
    key: row.key,
    actor: row.actor,
    principal_id: row.principal_id,
    ip: row.ip,
    count: row.count ?? 1,
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
