import { GLOBAL_SCOPE } from "../../model/records.js";
import type { AttemptRecord, DueDelivery } from "../../model/records.js";
import type { AttemptLogged, DueScope, OutboxEvent, OutboxStore, ScopeClaim, StoredAttempt } from "../outbox.js";
import { toDueDelivery } from "../rows.js";
import type { AttemptRow, DueDeliveryRow } from "../rows.js";
import { orderingStatement } from "./batch/index.js";
import type { Queryable } from "./batch/index.js";
import { attemptInsert, doneDeliveriesDelete, eventInsert, pendingCountSelect } from "../sql/outbox.js";
import { PgExecutor } from "./executor.js";

/**
 * How long a claimed delivery is held by the node that claimed it, ms
 * (leased_until): other nodes skip its webhook meanwhile; a node killed
 * mid-delivery leaves it due again after the lease.
 */
export const CLAIM_LEASE_MS = 60_000;

/** The scope key of a webhook row `w` in SQL: "" for global webhooks, else the org id. */
const SCOPE = "coalesce(w.org_id, '')";

/**
 * SQL: the pending delivery `d` is due at $1, of a webhook not in $2 (busy)
 * none of whose deliveries a node holds leased.
 */
const FREE_DUE = `d.state = 'pending' AND d.next_attempt_at <= $1 AND NOT (d.webhook_id = ANY($2::text[]))
  AND NOT EXISTS (SELECT 1 FROM webhook_deliveries x
                  WHERE x.webhook_id = d.webhook_id AND x.state = 'pending' AND x.leased_until > $1)`;

/**
 * SQL: the ids of the first claims.count due deliveries (FREE_DUE) of each
 * claimed scope, oldest due first; $3 and $4 are the claims' scope keys
 * and counts; `only` narrows the deliveries further.
 */
const CLAIMED = (only: string): string =>
  `SELECT c.id, c.webhook_id FROM (
     SELECT d.id, d.webhook_id, ${SCOPE} AS scope,
            row_number() OVER (PARTITION BY ${SCOPE} ORDER BY d.next_attempt_at, d.id) AS turn
     FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
     WHERE ${FREE_DUE} AND ${SCOPE} = ANY($3::text[]) AND ${only}
   ) c JOIN unnest($3::text[], $4::integer[]) AS k(scope, n) ON k.scope = c.scope
   WHERE c.turn <= k.n`;

/** The SQL scope key as the domain names the scope. */
const scopeName = (key: string): string => (key === "" ? GLOBAL_SCOPE : key);

/**
 * The PostgreSQL outbox store (webhook_events, webhook_deliveries,
 * webhook_attempts). claim() locks the webhooks of the deliveries it
 * claims (free ones: none of their deliveries leased) with
 * `FOR UPDATE SKIP LOCKED` and leases those deliveries (CLAIM_LEASE_MS),
 * which the worker sends in order: a pending delivery is in the hands of one node at a
 * time, and a webhook's deliveries go out one after another across nodes.
 */
export class PgOutboxStore implements OutboxStore {
  /** The statements written once for both engines (store/sql/outbox.ts). */
  private readonly x: PgExecutor;

  constructor(private readonly db: Queryable) {
    this.x = new PgExecutor(db);
  }

  async enqueue(event: OutboxEvent, webhookIds: readonly string[], now: number): Promise<void> {
    await this.x.run(eventInsert(event, now));
    if (webhookIds.length === 0) return;
    await this.db.query(
      `INSERT INTO webhook_deliveries (webhook_id, event_id, state, attempts, next_attempt_at, updated_at)
       SELECT unnest($1::text[]), $2, 'pending', 0, $3, $3`,
      [[...webhookIds], event.id, now],
    );
  }

  async dueScopes(now: number, busy: ReadonlySet<string>): Promise<DueScope[]> {
    const r = await this.db.query<{ scope: string; n: number }>(
      `SELECT ${SCOPE} AS scope, count(*)::integer AS n
       FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
       WHERE ${FREE_DUE}
       GROUP BY 1`,
      [now, [...busy]],
    );
    return r.rows.map((row) => ({ scope: scopeName(row.scope), due: row.n }));
  }

  async claim(now: number, busy: ReadonlySet<string>, claims: readonly ScopeClaim[]): Promise<DueDelivery[][]> {
    if (claims.length === 0) return [];
    const keys = claims.map((c) => (c.scope === GLOBAL_SCOPE ? "" : c.scope));
    const counts = claims.map((c) => c.count);
    // 1. Lock the webhooks of the claimed deliveries; one another claim holds is skipped.
    const locked = await this.db.query<{ id: string }>(
      orderingStatement(`SELECT w.id FROM webhooks w WHERE w.id IN (SELECT webhook_id FROM (${CLAIMED("true")}) claimed)
       ORDER BY w.id FOR UPDATE OF w SKIP LOCKED`).with([now, [...busy], keys, counts]),
    );
    const lists = claims.map((): DueDelivery[] => []);
    if (locked.rows.length === 0) return lists;
    // 2. A new statement, so a new snapshot (READ COMMITTED): a lease another
    //    node committed before this one took the webhook locks is seen here,
    //    and no other claim can lease these webhooks' deliveries meanwhile.
    //    The UPDATE re-checks the lease on the row itself.
    const r = await this.db.query<DueDeliveryRow & { scope: string }>(
      `WITH leased AS (
         UPDATE webhook_deliveries d SET leased_until = $1 + $6::bigint
         FROM (${CLAIMED("d.webhook_id = ANY($5::text[])")}) claimed
         WHERE d.id = claimed.id AND (d.leased_until IS NULL OR d.leased_until <= $1)
         RETURNING d.id, d.webhook_id, d.event_id, d.attempts, d.next_attempt_at
       )
       SELECT l.id, l.webhook_id, w.url, l.event_id, e.type, e.body, l.attempts, w.failing_since,
              w.signing_generation, w.previous_signing_until, ${SCOPE} AS scope
       FROM leased l JOIN webhooks w ON w.id = l.webhook_id JOIN webhook_events e ON e.id = l.event_id
       ORDER BY l.next_attempt_at, l.id`,
      [now, [...busy], keys, counts, locked.rows.map((row) => row.id), CLAIM_LEASE_MS],
    );
    for (const row of r.rows) lists[keys.indexOf(row.scope)]?.push(toDueDelivery(row, scopeName(row.scope)));
    return lists;
  }

  async nextDueAt(busy: ReadonlySet<string>): Promise<number | null> {
    const r = await this.db.query<{ next_attempt_at: number }>(
      `SELECT greatest(next_attempt_at, coalesce(leased_until, 0)) AS next_attempt_at FROM webhook_deliveries
       WHERE state = 'pending' AND NOT (webhook_id = ANY($1::text[]))
       ORDER BY 1 LIMIT 1`,
      [[...busy]],
    );
    return r.rows[0]?.next_attempt_at ?? null;
  }

  async isPending(deliveryId: number): Promise<boolean> {
    return ((await this.db.query("SELECT 1 FROM webhook_deliveries WHERE id = $1 AND state = 'pending'", [deliveryId])).rowCount ?? 0) > 0;
  }

  async recordAttempt(deliveryId: number, outcome: AttemptRecord, now: number): Promise<AttemptLogged | undefined> {
    const state = outcome.status === "retrying" ? "pending" : outcome.status;
    const next = outcome.status === "retrying" ? (outcome.nextAttemptAt ?? now) : null;
    const r = await this.db.query<{ attempts: number; webhook_id: string; event_id: string; type: string }>(
      `WITH updated AS (
         UPDATE webhook_deliveries SET attempts = attempts + 1, state = $2, next_attempt_at = $3, leased_until = NULL, updated_at = $4
         WHERE id = $1 AND state = 'pending'
         RETURNING attempts, webhook_id, event_id
       )
       SELECT u.attempts, u.webhook_id, u.event_id, e.type FROM updated u JOIN webhook_events e ON e.id = u.event_id`,
      [deliveryId, state, next, now],
    );
    const updated = r.rows[0];
    if (updated === undefined) return undefined;
    await this.x.run(
      attemptInsert({
        deliveryId,
        webhookId: updated.webhook_id,
        eventId: updated.event_id,
        type: updated.type,
        attempt: updated.attempts,
        outcome,
        at: now,
      }),
    );
    return { attempt: updated.attempts, webhookId: updated.webhook_id };
  }

  async pendingCount(): Promise<number> {
    return Number((await this.x.get<{ n: number | string }>(pendingCountSelect()))?.n ?? 0);
  }

  async prune(cutoff: number): Promise<number> {
    const done = await this.x.run(doneDeliveriesDelete(cutoff));
    const events = await this.db.query(
      `DELETE FROM webhook_events e WHERE e.created_at < $1
       AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id)`,
      [cutoff],
    );
    return done + (events.rowCount ?? 0);
  }

  async attempts(webhookId: string, beforeId: number, limit: number): Promise<StoredAttempt[]> {
    const r = await this.db.query<AttemptRow>(
      // next_attempt_at: the delivery's, on the latest attempt of a still pending delivery only.
      `SELECT a.id, a.event_id, a.type, a.attempt, a.status, a.http_status, a.error, a.at,
              CASE WHEN d.state = 'pending' AND a.attempt = d.attempts THEN d.next_attempt_at END AS next_attempt_at
       FROM webhook_attempts a LEFT JOIN webhook_deliveries d ON d.id = a.delivery_id
       WHERE a.webhook_id = $1 AND a.id < $2 ORDER BY a.id DESC LIMIT $3`,
      [webhookId, beforeId, limit],
    );
    return r.rows.map((row) => ({
      id: row.id,
      eventId: row.event_id,
      type: row.type,
      attempt: row.attempt,
      status: row.status,
      httpStatus: row.http_status,
      error: row.error,
      at: row.at,
      nextAttemptAt: row.next_attempt_at,
    }));
  }
}
