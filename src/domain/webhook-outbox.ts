import type { Db } from "../db.js";
import { newId } from "../crypto.js";
import type { EventSink, Origin, SecretEvent } from "./events.js";
import { GLOBAL_SCOPE } from "./secret-model.js";

/**
 * The webhook outbox and delivery queue (design.md "Events are rows",
 * decisions.md section 7): secret events written as rows in the change's
 * transaction, and the pending deliveries the worker (webhooks/worker.ts)
 * takes from them. Webhook registrations are WebhookRegistry in webhooks.ts,
 * which re-exports this module's public names.
 */

/**
 * Finished deliveries (delivered or failed) and their attempts are kept this
 * long for GET .../deliveries, then removed by DeliveryQueue.cleanup():
 * seven days, in milliseconds.
 */
export const DELIVERY_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/** An attempt's outcome: delivered; retrying (failed, another attempt is scheduled); failed (the last attempt failed). */
export type AttemptStatus = "delivered" | "retrying" | "failed";

/**
 * The signed body of an event (interface section 6, decisions.md section 7):
 * `{id, type, timestamp, data}`; `data` has `key` (or `id` for a public
 * secret), `read_count`, `max_reads`, `expires_at` (Unix seconds or null) and
 * `org_id` for org events. `timestamp` is Unix seconds. Never the value:
 * SecretEvent does not carry it.
 * @param at the time of the change, Unix milliseconds.
 */
export function eventPayload(eventId: string, event: SecretEvent, at: number): string {
  const data: Record<string, string | number | null> = event.isPublic ? { id: event.key } : { key: event.key };
  data.read_count = event.readCount;
  data.max_reads = event.maxReads;
  data.expires_at = event.expiresAt === null ? null : Math.floor(event.expiresAt / 1000);
  if (event.scope !== GLOBAL_SCOPE) data.org_id = event.scope;
  return JSON.stringify({ id: eventId, type: event.type, timestamp: Math.floor(at / 1000), data });
}

/** True when a webhook subscribed to events `events` wants an event of type `type`. */
export function subscribes(events: readonly string[], type: string): boolean {
  return events.includes("*") || events.includes(type);
}

interface SubscriberRow {
  id: string;
  events: string;
  key_prefix: string | null;
}

export interface WebhookOutboxDeps {
  db: Db;
  /** Current time, Unix milliseconds. */
  now: () => number;
  /**
   * Called after an event was queued (still inside the transaction): wakes
   * the delivery worker. It must only schedule work, never send.
   */
  onQueued?: (() => void) | undefined;
}

/** Scopes whose subscribers are cached at most; past it the cache starts over. */
const MAX_CACHED_SCOPES = 10_000;

/** A webhook as the outbox matches events against it. */
interface Subscriber {
  id: string;
  events: string[];
  keyPrefix: string | null;
}

/**
 * The webhook outbox, an EventSink (design.md "Events are rows"): a secret
 * event is written, in the transaction of the change, as one
 * `webhook_events` row (the exact body every attempt sends) and one pending
 * `webhook_deliveries` row per subscribed webhook: global events to global
 * webhooks, an org's events to that org's webhooks (decisions.md section 7).
 * With no subscriber nothing is written. If the write fails the change
 * rolls back with it.
 */
export class WebhookOutbox implements EventSink {
  private readonly q;
  /**
   * The subscribers of each scope, parsed, as last read: every secret event
   * looks its scope's up, and webhooks change rarely. Dropped whole by
   * invalidate() (a webhook created or deleted, any rollback).
   */
  private readonly subscribers = new Map<string, Subscriber[]>();

  constructor(private readonly deps: WebhookOutboxDeps) {
    const db = deps.db;
    this.q = {
      globalSubscribers: db.prepare<[], SubscriberRow>("SELECT id, events, key_prefix FROM webhooks WHERE org_id IS NULL"),
      orgSubscribers: db.prepare<[string], SubscriberRow>("SELECT id, events, key_prefix FROM webhooks WHERE org_id = ?"),
      insertEvent: db.prepare<[string, string, string, number]>(
        "INSERT INTO webhook_events (id, type, body, created_at) VALUES (?, ?, ?, ?)",
      ),
      insertDelivery: db.prepare<[string, string, number, number]>(
        `INSERT INTO webhook_deliveries (webhook_id, event_id, state, attempts, next_attempt_at, updated_at)
         VALUES (?, ?, 'pending', 0, ?, ?)`,
      ),
    };
  }

  /**
   * Forgets the cached subscribers: call it when a webhook is created or
   * deleted, and on every rollback (a rolled-back create must not stay
   * cached).
   */
  invalidate(): void {
    this.subscribers.clear();
  }

  /** The webhooks of a scope, from the cache or read now (in the caller's transaction). */
  private subscribersOf(scope: string): Subscriber[] {
    let list = this.subscribers.get(scope);
    if (list === undefined) {
      const rows = scope === GLOBAL_SCOPE ? this.q.globalSubscribers.all() : this.q.orgSubscribers.all(scope);
      list = rows.map((w) => ({ id: w.id, events: JSON.parse(w.events) as string[], keyPrefix: w.key_prefix }));
      if (this.subscribers.size >= MAX_CACHED_SCOPES) this.subscribers.clear();
      this.subscribers.set(scope, list);
    }
    return list;
  }

  /** Queues the event for every webhook of its scope that subscribes to it. */
  secretEvent(event: SecretEvent, _origin: Origin): void {
    const all = this.subscribersOf(event.scope);
    if (all.length === 0) return;
    const targets = all.filter(
      (w) =>
        subscribes(w.events, event.type) &&
        (w.keyPrefix === null || (!event.isPublic && event.key.startsWith(w.keyPrefix))),
    );
    if (targets.length === 0) return;
    const now = this.deps.now();
    const eventId = newId("evt_");
    this.q.insertEvent.run(eventId, event.type, eventPayload(eventId, event, now), now);
    for (const target of targets) this.q.insertDelivery.run(target.id, eventId, now, now);
    this.deps.onQueued?.();
  }

  /** Pruning is an audit action, not a webhook event. */
  secretsPruned(): void {}
}

/** A delivery the worker is about to attempt. */
export interface DueDelivery {
  deliveryId: number;
  webhookId: string;
  url: string;
  eventId: string;
  type: string;
  /** The exact body to sign and send. */
  body: string;
  /** Attempts made so far (0 before the first). */
  attempts: number;
  /** The webhook is failing: this attempt is the last, whatever its outcome. */
  failing: boolean;
}

/** What record() did. */
export interface Recorded {
  /** The attempt's number, 1 for the first. */
  attempt: number;
  /** This attempt made the webhook failing (it reached the threshold of failed deliveries). */
  turnedFailing: boolean;
}

/** The outcome of one attempt, as the worker decided it. Times in milliseconds. */
export interface AttemptRecord {
  status: AttemptStatus;
  httpStatus: number | null;
  error: string | null;
  /** For `retrying`: when the next attempt is due. */
  nextAttemptAt: number | null;
}

interface DueRow {
  id: number;
  webhook_id: string;
  url: string;
  event_id: string;
  type: string;
  body: string;
  attempts: number;
  next_attempt_at: number;
  failing_since: number | null;
}

/** The scope key of a webhook row: "" for global webhooks, else the org id. */
const SCOPE = "coalesce(w.org_id, '')";

/**
 * The outbox as the delivery worker sees it: due deliveries, shared fairly
 * between scopes, recording attempts (and the webhook's health), and the
 * retention cleanup. Synchronous; call inside GroupCommit.run() so what is
 * read is committed when it is sent.
 */
export class DeliveryQueue {
  private readonly q;
  /** The scope served first in the last due() call; the next call starts after it. */
  private lastScope: string | undefined;

  /**
   * @param failingAfter VAULT_WEBHOOK_FAILING_AFTER: consecutive failed
   *   deliveries that mark a webhook failing (default 5).
   */
  constructor(
    db: Db,
    private readonly failingAfter = 5,
  ) {
    this.q = {
      // `busy`: a JSON array of webhook ids whose deliveries are left out.
      dueScopes: db.prepare<[number, string], { scope: string }>(
        `SELECT DISTINCT ${SCOPE} AS scope
         FROM webhook_deliveries d INDEXED BY webhook_deliveries_due
         JOIN webhooks w ON w.id = d.webhook_id
         WHERE d.state = 'pending' AND d.next_attempt_at <= ?
           AND d.webhook_id NOT IN (SELECT value FROM json_each(?))
         ORDER BY scope`,
      ),
      due: db.prepare<[number, string, string, number], DueRow>(
        `SELECT d.id, d.webhook_id, w.url, d.event_id, e.type, e.body, d.attempts, d.next_attempt_at, w.failing_since
         FROM webhook_deliveries d INDEXED BY webhook_deliveries_due
         JOIN webhooks w ON w.id = d.webhook_id
         JOIN webhook_events e ON e.id = d.event_id
         WHERE d.state = 'pending' AND d.next_attempt_at <= ?
           AND d.webhook_id NOT IN (SELECT value FROM json_each(?))
           AND ${SCOPE} = ?
         ORDER BY d.next_attempt_at, d.id LIMIT ?`,
      ),
      delivered: db.prepare<[string]>("UPDATE webhooks SET failed_deliveries = 0, failing_since = NULL WHERE id = ?"),
      failed: db.prepare<{ id: string; now: number; threshold: number }, { failed_deliveries: number }>(
        `UPDATE webhooks SET failed_deliveries = failed_deliveries + 1,
           failing_since = CASE WHEN failing_since IS NULL AND failed_deliveries + 1 >= @threshold THEN @now ELSE failing_since END
         WHERE id = @id RETURNING failed_deliveries`,
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
      insertAttempt: db.prepare(
        `INSERT INTO webhook_attempts (delivery_id, webhook_id, event_id, type, attempt, status, http_status, error, at)
         VALUES (@delivery_id, @webhook_id, @event_id, @type, @attempt, @status, @http_status, @error, @at)`,
      ),
      pendingCount: db.prepare<[], { n: number }>("SELECT count(*) AS n FROM webhook_deliveries WHERE state = 'pending'"),
      removeDone: db.prepare<[number]>("DELETE FROM webhook_deliveries WHERE state <> 'pending' AND updated_at < ?"),
      removeEvents: db.prepare<[number]>(
        `DELETE FROM webhook_events WHERE created_at < ?
         AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = webhook_events.id)`,
      ),
    };
  }

  /**
   * Pending deliveries due at `now` (next_attempt_at <= now), leaving out
   * every delivery of the webhooks in `busy` (those with attempts in flight:
   * the worker sends one webhook's deliveries one after another, in order).
   *
   * The `limit` slots are shared round-robin between the scopes (the global
   * scope and each org) that have due deliveries: one each in turn, oldest
   * first within a scope, and each call starts with the scope after the one
   * the previous call started with. So one tenant with thousands of queued
   * deliveries delays another tenant's by at most one turn.
   *
   * @param limit at most this many.
   */
  due(now: number, limit: number, busy: ReadonlySet<string>): DueDelivery[] {
    if (limit <= 0) return [];
    const busyJson = JSON.stringify([...busy]);
    const scopes = this.q.dueScopes.all(now, busyJson).map((r) => r.scope);
    if (scopes.length === 0) return [];
    const last = this.lastScope;
    const start = last === undefined ? 0 : scopes.findIndex((scope) => scope > last);
    const rotated = start <= 0 ? scopes : [...scopes.slice(start), ...scopes.slice(0, start)];
    const served = rotated.slice(0, limit);
    this.lastScope = served[0];
    const queues = served.map((scope) => this.q.due.all(now, busyJson, scope, limit));
    const picked: DueRow[] = [];
    for (let turn = 0; picked.length < limit; turn++) {
      let any = false;
      for (const queue of queues) {
        const row = queue[turn];
        if (row === undefined) continue;
        any = true;
        if (picked.length < limit) picked.push(row);
      }
      if (!any) break;
    }
    return picked.map((r) => ({
      deliveryId: r.id,
      webhookId: r.webhook_id,
      url: r.url,
      eventId: r.event_id,
      type: r.type,
      body: r.body,
      attempts: r.attempts,
      failing: r.failing_since !== null,
    }));
  }

  /**
   * When the next pending delivery of a webhook not in `busy` is due
   * (milliseconds), or null when none is.
   */
  nextDueAt(busy: ReadonlySet<string>): number | null {
    return this.q.upcoming.get(JSON.stringify([...busy]))?.next_attempt_at ?? null;
  }

  /** Deliveries still pending, of every webhook: the outbox depth (metrics). Run it inside the group commit. */
  pendingCount(): number {
    return this.q.pendingCount.get()?.n ?? 0;
  }

  /** True while the delivery is still pending (not delivered, failed or deleted). */
  isPending(deliveryId: number): boolean {
    return this.q.pending.get(deliveryId) !== undefined;
  }

  /**
   * Records an attempt: counts it, moves the delivery to delivered / failed or
   * reschedules it, and logs the attempt. A delivery that is gone (its
   * webhook was deleted meanwhile) is left alone.
   *
   * The webhook's health follows: a delivered attempt resets its count of
   * consecutive failed deliveries and clears `failing`; a delivery that ends
   * failed adds one, and reaching `failingAfter` marks it failing (from then
   * on the worker makes one attempt per delivery, no retries).
   *
   * @param now time of the attempt's end, milliseconds.
   * @returns the attempt number and whether the webhook just became failing,
   *   or null when the delivery is gone.
   */
  record(deliveryId: number, outcome: AttemptRecord, now: number): Recorded | null {
    const state = outcome.status === "retrying" ? "pending" : outcome.status;
    const next = outcome.status === "retrying" ? (outcome.nextAttemptAt ?? now) : null;
    const updated = this.q.update.get({ id: deliveryId, state, next, now });
    if (!updated) return null;
    this.q.insertAttempt.run({
      delivery_id: deliveryId,
      webhook_id: updated.webhook_id,
      event_id: updated.event_id,
      type: this.q.type.get(updated.event_id)?.type ?? "",
      attempt: updated.attempts,
      status: outcome.status,
      http_status: outcome.httpStatus,
      error: outcome.error,
      at: now,
    });
    let turnedFailing = false;
    if (outcome.status === "delivered") {
      this.q.delivered.run(updated.webhook_id);
    } else if (outcome.status === "failed") {
      const health = this.q.failed.get({ id: updated.webhook_id, now, threshold: this.failingAfter });
      turnedFailing = health?.failed_deliveries === this.failingAfter;
    }
    return { attempt: updated.attempts, turnedFailing };
  }

  /**
   * Removes deliveries finished before `cutoff` (with their attempts) and
   * events older than `cutoff` that no delivery needs any more.
   * @returns how many rows were removed.
   */
  cleanup(cutoff: number): number {
    return this.q.removeDone.run(cutoff).changes + this.q.removeEvents.run(cutoff).changes;
  }
}
