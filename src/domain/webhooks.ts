import type { Db } from "../db.js";
import { newId } from "../crypto.js";
import { SECRET_EVENT_TYPES } from "./events.js";
import type { EventSink, Origin, SecretEvent, SecretEventType } from "./events.js";
import { GLOBAL_SCOPE } from "./secrets.js";

/** The event types a webhook may subscribe to (decisions.md section 7); `*` means all. */
export const WEBHOOK_EVENT_TYPES: readonly SecretEventType[] = SECRET_EVENT_TYPES;

/** Webhook ids: `wh_` and 26 base32 characters (crypto.newId). */
export const WEBHOOK_ID_PATTERN = /^wh_[a-z2-7]{26}$/;

/**
 * Finished deliveries (delivered or failed) and their attempts are kept this
 * long for GET .../deliveries, then removed by DeliveryQueue.cleanup():
 * seven days, in milliseconds.
 */
export const DELIVERY_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/** A webhook (decisions.md section 7). Times in milliseconds. */
export interface Webhook {
  id: string;
  /** null for a global webhook. */
  orgId: string | null;
  /** https:// URL, normalized by the WHATWG URL parser. */
  url: string;
  /** Event types, or `["*"]`. */
  events: string[];
  description: string | null;
  /**
   * The prefix of the scoped admin key that created it: only events of keyed
   * secrets under this prefix are queued for it, and only keys whose prefix
   * covers it see it. null (master, principals): every event of the scope.
   */
  keyPrefix: string | null;
  createdAt: number;
}

/** One delivery attempt, for GET .../deliveries. `at` in milliseconds. */
export interface DeliveryAttempt {
  eventId: string;
  type: string;
  attempt: number;
  /** delivered; retrying (failed, another attempt is scheduled); failed (the last attempt failed). */
  status: AttemptStatus;
  /** The receiver's HTTP status, or null when no response came. */
  httpStatus: number | null;
  /** Why it failed, null on success. */
  error: string | null;
  at: number;
}

export type AttemptStatus = "delivered" | "retrying" | "failed";

/** Which webhooks a caller may see: those of one scope, narrowed by a scoped key's prefix. */
export interface WebhookView {
  /** null: global webhooks; else the org's. */
  orgId: string | null;
  /** The viewer's scoped-key prefix; null sees every webhook of the scope. */
  viewerPrefix: string | null;
}

export interface CreateWebhookInput {
  orgId: string | null;
  /** Already validated and normalized (webhooks/address-guard.ts). */
  url: string;
  events: string[];
  description: string | null;
  keyPrefix: string | null;
}

/**
 * Records audit entries on behalf of a request's origin; structurally the
 * `recordFor` of domain/audit.ts (decisions.md section 8), so the audit log
 * can be passed as is and knows the request has left its row.
 */
export interface AuditRecorder {
  recordFor(origin: Origin, scope: string, action: string, key: string | null): void;
}

interface WebhookRow {
  rowid: number;
  id: string;
  org_id: string | null;
  url: string;
  events: string;
  description: string | null;
  key_prefix: string | null;
  created_at: number;
}

interface AttemptRow {
  id: number;
  event_id: string;
  type: string;
  attempt: number;
  status: AttemptStatus;
  http_status: number | null;
  error: string | null;
  at: number;
}

export interface WebhookRegistryDeps {
  db: Db;
  /** Current time, Unix milliseconds. */
  now: () => number;
  /** Audit log for `webhook.created` / `webhook.deleted`; none when undefined. */
  audit?: AuditRecorder | undefined;
}

export interface Page<T> {
  items: T[];
  /** Row id to continue after, when more remain. */
  next: number | null;
}

/** SQL: the webhook is visible to a viewer with prefix @viewer (or any when null). */
const VISIBLE = "(@viewer IS NULL OR (key_prefix IS NOT NULL AND substr(key_prefix, 1, length(@viewer)) = @viewer))";

/**
 * Webhook registrations, global and per org (interface section 4 "Global
 * webhooks" / "Org webhooks", decisions.md section 7). Synchronous; every
 * change runs inside GroupCommit.run() with its audit row.
 */
export class WebhookRegistry {
  private readonly q;

  constructor(private readonly deps: WebhookRegistryDeps) {
    const db = deps.db;
    this.q = {
      insert: db.prepare(
        `INSERT INTO webhooks (id, org_id, url, events, description, key_prefix, created_at)
         VALUES (@id, @org_id, @url, @events, @description, @key_prefix, @created_at)
         RETURNING rowid, *`,
      ),
      listGlobal: db.prepare<{ viewer: string | null; after: number; limit: number }, WebhookRow>(
        `SELECT rowid, * FROM webhooks WHERE org_id IS NULL AND rowid > @after AND ${VISIBLE}
         ORDER BY rowid LIMIT @limit`,
      ),
      listOrg: db.prepare<{ org: string; viewer: string | null; after: number; limit: number }, WebhookRow>(
        `SELECT rowid, * FROM webhooks WHERE org_id = @org AND rowid > @after AND ${VISIBLE}
         ORDER BY rowid LIMIT @limit`,
      ),
      getGlobal: db.prepare<{ id: string; viewer: string | null }, WebhookRow>(
        `SELECT rowid, * FROM webhooks WHERE id = @id AND org_id IS NULL AND ${VISIBLE}`,
      ),
      getOrg: db.prepare<{ id: string; org: string; viewer: string | null }, WebhookRow>(
        `SELECT rowid, * FROM webhooks WHERE id = @id AND org_id = @org AND ${VISIBLE}`,
      ),
      remove: db.prepare<[string]>("DELETE FROM webhooks WHERE id = ?"),
      attempts: db.prepare<{ webhook: string; before: number; limit: number }, AttemptRow>(
        `SELECT id, event_id, type, attempt, status, http_status, error, at FROM webhook_attempts
         WHERE webhook_id = @webhook AND id < @before ORDER BY id DESC LIMIT @limit`,
      ),
    };
  }

  /**
   * Registers a webhook; audit action `webhook.created` with the webhook id
   * as key (decisions.md section 8).
   * @returns the webhook.
   */
  create(input: CreateWebhookInput, origin: Origin): Webhook {
    const row = this.q.insert.get({
      id: newId("wh_"),
      org_id: input.orgId,
      url: input.url,
      events: JSON.stringify(input.events),
      description: input.description,
      key_prefix: input.keyPrefix,
      created_at: this.deps.now(),
    }) as WebhookRow;
    const webhook = toWebhook(row);
    this.audit("webhook.created", webhook, origin);
    return webhook;
  }

  /** One page of a scope's webhooks visible to the viewer, oldest first. */
  list(view: WebhookView, options: { limit: number; afterId?: number | undefined }): Page<Webhook> {
    const params = { viewer: view.viewerPrefix, after: options.afterId ?? 0, limit: options.limit + 1 };
    const rows = view.orgId === null ? this.q.listGlobal.all(params) : this.q.listOrg.all({ ...params, org: view.orgId });
    const more = rows.length > options.limit;
    const page = more ? rows.slice(0, options.limit) : rows;
    return { items: page.map(toWebhook), next: more ? (page[page.length - 1]?.rowid ?? null) : null };
  }

  /** The webhook with this id in the scope, when the viewer may see it; else undefined. */
  get(view: WebhookView, id: string): Webhook | undefined {
    const row =
      view.orgId === null
        ? this.q.getGlobal.get({ id, viewer: view.viewerPrefix })
        : this.q.getOrg.get({ id, org: view.orgId, viewer: view.viewerPrefix });
    return row ? toWebhook(row) : undefined;
  }

  /**
   * Deletes a webhook. Its pending deliveries and its attempt log go with it
   * (ON DELETE CASCADE), so nothing more is sent to it (interface section 4).
   * Audit action `webhook.deleted`.
   * @returns false when the viewer sees no such webhook (404).
   */
  remove(view: WebhookView, id: string, origin: Origin): boolean {
    const webhook = this.get(view, id);
    if (!webhook) return false;
    this.q.remove.run(id);
    this.audit("webhook.deleted", webhook, origin);
    return true;
  }

  /**
   * A page of a webhook's delivery attempts, newest first
   * (decisions.md section 7, GET .../deliveries). The caller has checked the
   * webhook is visible (get()).
   * @param beforeId continue below this attempt id (cursor).
   */
  attempts(webhookId: string, options: { limit: number; beforeId?: number | undefined }): Page<DeliveryAttempt> {
    const rows = this.q.attempts.all({
      webhook: webhookId,
      before: options.beforeId ?? Number.MAX_SAFE_INTEGER,
      limit: options.limit + 1,
    });
    const more = rows.length > options.limit;
    const page = more ? rows.slice(0, options.limit) : rows;
    return {
      items: page.map((r) => ({
        eventId: r.event_id,
        type: r.type,
        attempt: r.attempt,
        status: r.status,
        httpStatus: r.http_status,
        error: r.error,
        at: r.at,
      })),
      next: more ? (page[page.length - 1]?.id ?? null) : null,
    };
  }

  private audit(action: "webhook.created" | "webhook.deleted", webhook: Webhook, origin: Origin): void {
    this.deps.audit?.recordFor(origin, webhook.orgId ?? GLOBAL_SCOPE, action, webhook.id);
  }
}

function toWebhook(row: WebhookRow): Webhook {
  return {
    id: row.id,
    orgId: row.org_id,
    url: row.url,
    events: JSON.parse(row.events) as string[],
    description: row.description,
    keyPrefix: row.key_prefix,
    createdAt: row.created_at,
  };
}

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

  /** Queues the event for every webhook of its scope that subscribes to it. */
  secretEvent(event: SecretEvent, _origin: Origin): void {
    const rows = event.scope === GLOBAL_SCOPE ? this.q.globalSubscribers.all() : this.q.orgSubscribers.all(event.scope);
    const targets = rows.filter(
      (w) =>
        subscribes(JSON.parse(w.events) as string[], event.type) &&
        (w.key_prefix === null || (!event.isPublic && event.key.startsWith(w.key_prefix))),
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
}

/**
 * The outbox as the delivery worker sees it: due deliveries, recording
 * attempts, and the retention cleanup. Synchronous; call inside
 * GroupCommit.run() so what is read is committed when it is sent.
 */
export class DeliveryQueue {
  private readonly q;

  constructor(db: Db) {
    this.q = {
      // `busy`: a JSON array of webhook ids whose deliveries are left out.
      due: db.prepare<[number, string, number], DueRow>(
        `SELECT d.id, d.webhook_id, w.url, d.event_id, e.type, e.body, d.attempts, d.next_attempt_at
         FROM webhook_deliveries d INDEXED BY webhook_deliveries_due
         JOIN webhooks w ON w.id = d.webhook_id
         JOIN webhook_events e ON e.id = d.event_id
         WHERE d.state = 'pending' AND d.next_attempt_at <= ?
           AND d.webhook_id NOT IN (SELECT value FROM json_each(?))
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
      insertAttempt: db.prepare(
        `INSERT INTO webhook_attempts (delivery_id, webhook_id, event_id, type, attempt, status, http_status, error, at)
         VALUES (@delivery_id, @webhook_id, @event_id, @type, @attempt, @status, @http_status, @error, @at)`,
      ),
      removeDone: db.prepare<[number]>("DELETE FROM webhook_deliveries WHERE state <> 'pending' AND updated_at < ?"),
      removeEvents: db.prepare<[number]>(
        `DELETE FROM webhook_events WHERE created_at < ?
         AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = webhook_events.id)`,
      ),
    };
  }

  /**
   * Pending deliveries due at `now` (next_attempt_at <= now), oldest first,
   * leaving out every delivery of the webhooks in `busy` (those with
   * attempts in flight: the worker sends one webhook's deliveries one after
   * another, in order).
   * @param limit at most this many.
   */
  due(now: number, limit: number, busy: ReadonlySet<string>): DueDelivery[] {
    if (limit <= 0) return [];
    return this.q.due
      .all(now, JSON.stringify([...busy]), limit)
      .map((r) => ({
        deliveryId: r.id,
        webhookId: r.webhook_id,
        url: r.url,
        eventId: r.event_id,
        type: r.type,
        body: r.body,
        attempts: r.attempts,
      }));
  }

  /**
   * When the next pending delivery of a webhook not in `busy` is due
   * (milliseconds), or null when none is.
   */
  nextDueAt(busy: ReadonlySet<string>): number | null {
    return this.q.upcoming.get(JSON.stringify([...busy]))?.next_attempt_at ?? null;
  }

  /** True while the delivery is pending (not finished, its webhook not deleted). */
  isPending(deliveryId: number): boolean {
    return this.q.pending.get(deliveryId) !== undefined;
  }

  /**
   * Records an attempt: counts it, moves the delivery to delivered / failed or
   * reschedules it, and logs the attempt. A delivery that is gone (its
   * webhook was deleted meanwhile) is left alone.
   * @param now time of the attempt's end, milliseconds.
   * @returns the attempt number, or null when the delivery is gone.
   */
  record(deliveryId: number, outcome: AttemptRecord, now: number): number | null {
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
    return updated.attempts;
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
