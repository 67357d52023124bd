import type { Db } from "./db.js";
import type { AttemptRecord, DueDelivery } from "../../model/records.js";
import { GLOBAL_SCOPE } from "../../model/records.js";
import type { AttemptLogged, DueScope, OutboxEvent, OutboxStore, ScopeClaim, StoredAttempt } from "../outbox.js";
import { toDueDelivery } from "../rows.js";
import type { AttemptRow, DueDeliveryRow } from "../rows.js";
import { attemptInsert, doneDeliveriesDelete, eventInsert, pendingCountSelect } from "../sql/outbox.js";
import { SqliteExecutor } from "./executor.js";

/**
 * SQL for an attempt `a`'s next retry, ms: its delivery `d`'s next_attempt_at
 * when `a` is the latest attempt of a still pending delivery, else NULL.
 */
const NEXT_ATTEMPT_AT = "CASE WHEN d.state = 'pending' AND a.attempt = d.attempts THEN d.next_attempt_at END AS next_attempt_at";

/** The scope key of a webhook row in SQL: "" for global webhooks, else the org id. */
const SCOPE = "coalesce(w.org_id, '')";

/** The SQL scope key as the domain names the scope. */
const scopeName = (key: string): string => (key === "" ? GLOBAL_SCOPE : key);
/** The domain's scope name as the SQL scope key. */
const scopeKey = (scope: string): string => (scope === GLOBAL_SCOPE ? "" : scope);

/**
 * The SQLite outbox store (`webhook_events`, `webhook_deliveries`,
 * `webhook_attempts`): statements prepared once per database, every method
 * synchronous (it runs inside the group commit's unit of work). A busy set
 * reaches SQL as a JSON array read with json_each. Times are Unix
 * milliseconds.
 */
export class SqliteOutboxStore implements OutboxStore {
  private readonly q;
  /** The statements written once for both engines (store/sql/outbox.ts). */
  private readonly x: SqliteExecutor;

  constructor(db: Db) {
    this.x = new SqliteExecutor(db);
    this.q = {
      insertDelivery: db.prepare<[string, string, number, number]>(
        `INSERT INTO webhook_deliveries (webhook_id, event_id, state, attempts, next_attempt_at, updated_at)
         VALUES (?, ?, 'pending', 0, ?, ?)`,
      ),
      // `busy`: a JSON array of webhook ids whose deliveries are left out.
      dueScopes: db.prepare<[number, string], { scope: string; n: number }>(
        `SELECT ${SCOPE} AS scope, count(*) AS n
         FROM webhook_deliveries d INDEXED BY webhook_deliveries_due
         JOIN webhooks w ON w.id = d.webhook_id
         WHERE d.state = 'pending' AND d.next_attempt_at <= ?
           AND d.webhook_id NOT IN (SELECT value FROM json_each(?))
         GROUP BY scope`,
      ),
      due: db.prepare<[number, string, string, number], DueDeliveryRow>(
        `SELECT d.id, d.webhook_id, w.url, d.event_id, e.type, e.body, d.attempts, w.failing_since,
                w.signing_generation, w.previous_signing_until
         FROM webhook_deliveries d INDEXED BY webhook_deliveries_due
         JOIN webhooks w ON w.id = d.webhook_id
         JOIN webhook_events e ON e.id = d.event_id
         WHERE d.state = 'pending' AND d.next_attempt_at <= ?
           AND d.webhook_id NOT IN (SELECT value FROM json_each(?))
           AND ${SCOPE} = ?
         ORDER BY d.next_attempt_at, d.id LIMIT ?`,
      ),
      upcoming: db.prepare<[string], { next_attempt_at: number }>(
        `SELECT next_attempt_at FROM webhook_deliveries INDEXED BY webhook_deliveries_due
         WHERE state = 'pending' AND webhook_id NOT IN (SELECT value FROM json_each(?))
         ORDER BY next_attempt_at, id LIMIT 1`,
      ),
      update: db.prepare<{ id: number; state: string; next: number | null; now: number }, { attempts: number; webhook_id: string; event_id: string }>(
        `UPDATE webhook_deliveries SET attempts = attempts + 1, state = @state, next_attempt_at = @next, updated_at = @now
         WHERE id = @id AND state = 'pending'
         RETURNING attempts, webhook_id, event_id`,
      ),
      type: db.prepare<[string], { type: string }>("SELECT type FROM webhook_events WHERE id = ?"),
      pending: db.prepare<[number], { one: number }>(
        "SELECT 1 AS one FROM webhook_deliveries WHERE id = ? AND state = 'pending'",
      ),
      removeEvents: db.prepare<[number]>(
        `DELETE FROM webhook_events WHERE created_at < ?
         AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = webhook_events.id)`,
      ),
      attempts: db.prepare<{ webhook: string; before: number; limit: number }, AttemptRow>(
        `SELECT a.id, a.event_id, a.type, a.attempt, a.status, a.http_status, a.error, a.at, ${NEXT_ATTEMPT_AT}
         FROM webhook_attempts a LEFT JOIN webhook_deliveries d ON d.id = a.delivery_id
         WHERE a.webhook_id = @webhook AND a.id < @before ORDER BY a.id DESC LIMIT @limit`,
      ),
    };
  }

  enqueue(event: OutboxEvent, webhookIds: readonly string[], now: number): void {
    this.x.run(eventInsert(event, now));
    for (const webhookId of webhookIds) this.q.insertDelivery.run(webhookId, event.id, now, now);
  }

  dueScopes(now: number, busy: ReadonlySet<string>): DueScope[] {
    return this.q.dueScopes.all(now, JSON.stringify([...busy])).map((r) => ({ scope: scopeName(r.scope), due: r.n }));
  }

  /**
   * Nothing is marked: the group commit runs one unit of work at a time on
   * one connection, so the worker's own bookkeeping of what is in flight
   * (`busy`) is the claim.
   */
  claim(now: number, busy: ReadonlySet<string>, claims: readonly ScopeClaim[]): DueDelivery[][] {
    const ids = JSON.stringify([...busy]);
    return claims.map(({ scope, count }) =>
      this.q.due.all(now, ids, scopeKey(scope), count).map((row) => toDueDelivery(row, scope)),
    );
  }

  nextDueAt(busy: ReadonlySet<string>): number | null {
    return this.q.upcoming.get(JSON.stringify([...busy]))?.next_attempt_at ?? null;
  }

  isPending(deliveryId: number): boolean {
    return this.q.pending.get(deliveryId) !== undefined;
  }

  recordAttempt(deliveryId: number, outcome: AttemptRecord, now: number): AttemptLogged | undefined {
    const state = outcome.status === "retrying" ? "pending" : outcome.status;
    const next = outcome.status === "retrying" ? (outcome.nextAttemptAt ?? now) : null;
    const updated = this.q.update.get({ id: deliveryId, state, next, now });
    if (!updated) return undefined;
    this.x.run(
      attemptInsert({
        deliveryId,
        webhookId: updated.webhook_id,
        eventId: updated.event_id,
        type: this.q.type.get(updated.event_id)?.type ?? "",
        attempt: updated.attempts,
        outcome,
        at: now,
      }),
    );
    return { attempt: updated.attempts, webhookId: updated.webhook_id };
  }

  pendingCount(): number {
    return Number(this.x.get<{ n: number }>(pendingCountSelect())?.n ?? 0);
  }

  prune(cutoff: number): number {
    return this.x.run(doneDeliveriesDelete(cutoff)) + this.q.removeEvents.run(cutoff).changes;
  }

  attempts(webhookId: string, beforeId: number, limit: number): StoredAttempt[] {
    return this.q.attempts.all({ webhook: webhookId, before: beforeId, limit }).map((r) => ({
      id: r.id,
      eventId: r.event_id,
      type: r.type,
      attempt: r.attempt,
      status: r.status,
      httpStatus: r.http_status,
      error: r.error,
      at: r.at,
      nextAttemptAt: r.next_attempt_at,
    }));
  }
}
