import { decodeCursor, encodeCursor } from "../cursor.js";
import type { AuditRow } from "../../store/audit.js";
import type { Awaitable, Work } from "../../store/work.js";
import { VaultError } from "../../model/errors.js";
import type { EventSink, Origin, RequestEvent, SecretEvent } from "../events.js";

/** One audit row to write. Never a secret value (docs/contract.md §11). */
export interface AuditRecord {
  /** "global" or an org id: which audit log the row belongs to. */
  scope: string;
  /** secret.read, secret.pruned, key.created, auth.failed, ... (docs/contract.md §11). */
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
 * A query of one scope's audit log (docs/contract.md §5 and §11).
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
   * only its prefix). Served by the scope's entries, newest first, filtered.
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
}

/**
 * The append-only audit log (docs/contract.md §11): global and org entries
 * in one table, hash-chained by the store (store/audit.ts).
 *
 * - record() writes through the caller's unit of work: if the row cannot be
 *   written, the caller's change is rolled back with it (fail closed).
 * - As an EventSink it records every secret event in the event's scope, and
 *   prunes as `secret.pruned`.
 * - The database refuses UPDATE and DELETE on the table (schema triggers).
 */
export class AuditLog implements EventSink {
  constructor(private readonly deps: AuditDeps) {}

  /**
   * Appends one row to the chain, in the caller's unit of work (the store
   * chains it: store/audit.ts). The timestamp is deps.now() (ms); the store
   * raises it to its chain predecessor's if the clock stepped back.
   * @throws whatever the store throws; the caller's change must then roll back.
   */
  record(w: Work, entry: AuditRecord): Awaitable<void> {
    return w.audit.append({
      scope: entry.scope,
      at: this.deps.now(),
      action: entry.action,
      key: entry.key,
      actor: entry.actor,
      principal_id: entry.principalId,
      ip: entry.ip,
      count: entry.count ?? null,
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

  /** EventSink: a request event becomes the audit row of the same name, on the request's id, in its scope. */
  requestEvent(w: Work, event: RequestEvent, origin: Origin): Awaitable<void> {
    return this.recordFor(w, origin, event.scope, event.type, event.id);
  }

  /** EventSink: a prune is recorded as `secret.pruned` (key null), whatever the count. */
  secretsPruned(w: Work, scope: string, _count: number, origin: Origin): Awaitable<void> {
    return this.recordFor(w, origin, scope, "secret.pruned", null);
  }

  /**
   * One page of a scope's entries, newest first (docs/contract.md §5 and §11).
   * `since`/`until` are Unix seconds; the cursor is a row id. The store
   * answers without a scan of the table (docs/audit.md). A
   * `keyPrefix` without `key`, or a public id as `key`, is a filter over the
   * scope's (or the action's) entries, newest first, until the page is full
   * (docs/audit.md).
   * @throws VaultError "invalid" for a cursor this method did not make (400).
   */
  async query(w: Work, scope: string, filter: AuditFilter): Promise<AuditPage> {
    const limit = Math.min(Math.max(Math.trunc(filter.limit), 1), 1000);
    const rows = await w.audit.page({
      scope,
      sinceMs: filter.since === undefined ? undefined : filter.since * 1000,
      untilMs: filter.until === undefined ? undefined : filter.until * 1000,
      beforeId: filter.afterCursor === undefined ? undefined : decodeAuditCursor(filter.afterCursor),
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
