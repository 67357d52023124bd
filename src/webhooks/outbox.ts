import { newId } from "../crypto/tokens.js";
import type { Subscriber } from "../store/webhooks.js";
import { andThen } from "../store/work.js";
import type { Awaitable, Work } from "../store/work.js";
import type { EventSink, Origin, RequestEvent, SecretEvent } from "../domain/events.js";
import { GLOBAL_SCOPE } from "../domain/secrets/model.js";
import { planClaims } from "./shares.js";
import type { ScopeLimits } from "./shares.js";
import type { AttemptRecord, DueDelivery, } from "../model/records.js";
export type { AttemptRecord, DueDelivery, AttemptStatus } from "../model/records.js";

/**
 * The webhook outbox and delivery queue (docs/contract.md §10,
 * docs/webhooks.md): secret events written as rows in the change's
 * transaction, and the pending deliveries the worker (webhooks/worker.ts)
 * takes from them. Webhook registrations are WebhookRegistry in registry.ts,
 * which re-exports this module's public names.
 */

/**
 * Finished deliveries (delivered or failed) and their attempts are kept this
 * long for GET .../deliveries, then removed by DeliveryQueue.cleanup():
 * seven days, in milliseconds.
 */
export const DELIVERY_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * The signed body of an event (docs/contract.md §10):
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

/**
 * The signed body of a request event (docs/requests.md, "Events and
 * audit"): `{id, type, timestamp, data}`; `data` has `request_id`,
 * `max_reads`, `expires_at` (Unix seconds), `answer_id` (null until
 * answered) and `org_id` for org requests. Never the description, the
 * public key or the answer.
 * @param at the time of the change, Unix milliseconds.
 */
export function requestEventPayload(eventId: string, event: RequestEvent, at: number): string {
  const data: Record<string, string | number | null> = {
    request_id: event.id,
    max_reads: event.maxReads,
    expires_at: Math.floor(event.expiresAt / 1000),
    answer_id: event.answerId,
  };
  if (event.scope !== GLOBAL_SCOPE) data.org_id = event.scope;
  return JSON.stringify({ id: eventId, type: event.type, timestamp: Math.floor(at / 1000), data });
}

/** True when a webhook subscribed to events `events` wants an event of type `type`. */
export function subscribes(events: readonly string[], type: string): boolean {
  return events.includes("*") || events.includes(type);
}

export interface WebhookOutboxDeps {
  /** Current time, Unix milliseconds. */
  now: () => number;
  /**
   * Called after an event was queued (still inside the transaction): wakes
   * the delivery worker. It must only schedule work, never send.
   */
  onQueued?: (() => void) | undefined;
  /**
   * Keep each scope's subscribers in memory between events (default true).
   * Off when several nodes share the database: another node's webhook
   * change would not reach this node's cache.
   */
  cacheSubscribers?: boolean | undefined;
}

/** Scopes whose subscribers are cached at most; past it the cache starts over. */
const MAX_CACHED_SCOPES = 10_000;

/**
 * The webhook outbox, an EventSink (docs/webhooks.md, "Delivery and retries"): a secret
 * event is written, through the work handle of the change (so in its
 * transaction), as one `webhook_events` row (the exact body every attempt
 * sends) and one pending `webhook_deliveries` row per subscribed webhook:
 * global events to global webhooks, an org's events to that org's webhooks
 * (docs/contract.md §10). With no subscriber nothing is written. If the
 * write fails the change rolls back with it.
 */
export class WebhookOutbox implements EventSink {
  /**
   * The subscribers of each scope, as last read: every secret event looks
   * its scope's up, and webhooks change rarely. Dropped whole by
   * invalidate() (a webhook created or deleted, any rollback: assembly/vault.ts wires the engine's onRollback hook to it).
   */
  private readonly subscribers = new Map<string, Subscriber[]>();

  constructor(private readonly deps: WebhookOutboxDeps) {}

  /**
   * Forgets the cached subscribers: call it when a webhook is created or
   * deleted, and on every rollback (a rolled-back create must not stay
   * cached).
   */
  invalidate(): void {
    this.subscribers.clear();
  }

  /**
   * Queues the event for every webhook of its scope that subscribes to it.
   * Synchronous (returns undefined) when the stores answer synchronously:
   * the hot path of every secret change.
   */
  secretEvent(w: Work, event: SecretEvent, _origin: Origin): Awaitable<void> {
    const cached = this.subscribers.get(event.scope);
    if (cached !== undefined) return this.queue(w, event, cached);
    const read = w.webhooks.subscribers(event.scope === GLOBAL_SCOPE ? null : event.scope);
    return andThen(read, (list) => this.queue(w, event, this.remember(event.scope, list)));
  }

  /**
   * Queues a request event for every webhook of its scope that subscribes
   * to it and has no key prefix (a request names no key, as a public
   * secret does not).
   */
  requestEvent(w: Work, event: RequestEvent, _origin: Origin): Awaitable<void> {
    return andThen(this.subscribersOf(w, event.scope), (all) => {
      const targets = all.filter((hook) => subscribes(hook.events, event.type) && hook.keyPrefix === null);
      if (targets.length === 0) return undefined;
      const now = this.deps.now();
      const eventId = newId("evt_");
      const body = requestEventPayload(eventId, event, now);
      const written = w.outbox.enqueue({ id: eventId, type: event.type, body }, targets.map((hook) => hook.id), now);
      return andThen(written, () => this.deps.onQueued?.());
    });
  }

  /** A scope's subscribers: cached, or read in the caller's transaction and remembered. */
  private subscribersOf(w: Work, scope: string): Awaitable<Subscriber[]> {
    const cached = this.subscribers.get(scope);
    if (cached !== undefined) return cached;
    return andThen(w.webhooks.subscribers(scope === GLOBAL_SCOPE ? null : scope), (list) => this.remember(scope, list));
  }

  /** Pruning is an audit action, not a webhook event. */
  secretsPruned(): void {}

  /** Caches a scope's subscribers, as read in the caller's transaction. */
  private remember(scope: string, list: Subscriber[]): Subscriber[] {
    if (this.deps.cacheSubscribers === false) return list;
    if (this.subscribers.size >= MAX_CACHED_SCOPES) this.subscribers.clear();
    this.subscribers.set(scope, list);
    return list;
  }

  /** Writes the event and its deliveries for the subscribers that want it. */
  private queue(w: Work, event: SecretEvent, all: Subscriber[]): Awaitable<void> {
    if (all.length === 0) return undefined;
    const targets = all.filter(
      (hook) =>
        subscribes(hook.events, event.type) &&
        (hook.keyPrefix === null || (!event.isPublic && event.key.startsWith(hook.keyPrefix))),
    );
    if (targets.length === 0) return undefined;
    const now = this.deps.now();
    const eventId = newId("evt_");
    const written = w.outbox.enqueue(
      { id: eventId, type: event.type, body: eventPayload(eventId, event, now) },
      targets.map((hook) => hook.id),
      now,
    );
    return andThen(written, () => this.deps.onQueued?.());
  }
}

/** What record() did. */
export interface Recorded {
  /** The attempt's number, 1 for the first. */
  attempt: number;
  /** This attempt made the webhook failing (it reached the threshold of failed deliveries). */
  turnedFailing: boolean;
}

/**
 * The outbox as the delivery worker sees it, through the work handle: due
 * deliveries, shared fairly between scopes, recording attempts (and the
 * webhook's health), and the retention cleanup. Call inside a unit of work
 * (`tx.run((w) => ...)`) so what is read is committed when it is sent.
 */
export class DeliveryQueue {
  /** The scope served first in the last due() call; the next call starts after it. */
  private lastScope: string | undefined;

  /**
   * @param failingAfter VAULT_WEBHOOK_FAILING_AFTER: consecutive failed
   *   deliveries that mark a webhook failing (default 5).
   */
  constructor(private readonly failingAfter = 5) {}

  /**
   * Pending deliveries due at `now` (next_attempt_at <= now), leaving out
   * every delivery of the webhooks in `busy` (those with attempts in flight:
   * the worker sends one webhook's deliveries one after another, in order).
   *
   * The `limit` slots are shared round-robin between the scopes (the global
   * scope and each org) that have due deliveries: one each in turn, oldest
   * first within a scope, and each call starts with the scope after the one
   * the previous call started with. So one tenant with thousands of queued
   * deliveries delays another tenant's by at most one turn. No scope gets
   * more than its limit in `shares` (the worker's ScopeShares: a scope's
   * share of the slots, smaller for a scope whose attempts time out), so
   * one tenant's slow receivers cannot hold every slot.
   *
   * @param limit at most this many.
   * @param shares per-scope limits; default none below `limit`.
   */
  async due(w: Work, now: number, limit: number, busy: ReadonlySet<string>, shares?: ScopeLimits): Promise<DueDelivery[]> {
    if (limit <= 0) return [];
    const plan = planClaims(await w.outbox.dueScopes(now, busy), limit, this.lastScope, shares);
    if (plan.length === 0) return [];
    const claimed = await w.outbox.claim(now, busy, plan);
    const first = plan.find((_, i) => (claimed[i]?.length ?? 0) > 0);
    if (first === undefined) return [];
    this.lastScope = first.scope;
    // One of each scope in turn, in the plan's order: the round-robin.
    const picked: DueDelivery[] = [];
    for (let turn = 0; picked.length < limit; turn++) {
      const row = claimed.map((list) => list[turn]).filter((d) => d !== undefined);
      if (row.length === 0) break;
      picked.push(...row.slice(0, limit - picked.length));
    }
    return picked;
  }

  /**
   * When the next pending delivery of a webhook not in `busy` is due
   * (milliseconds), or null when none is.
   */
  nextDueAt(w: Work, busy: ReadonlySet<string>): Awaitable<number | null> {
    return w.outbox.nextDueAt(busy);
  }

  /** Deliveries still pending, of every webhook: the outbox depth (metrics). */
  pendingCount(w: Work): Awaitable<number> {
    return w.outbox.pendingCount();
  }

  /** True while the delivery is still pending (not delivered, failed or deleted). */
  isPending(w: Work, deliveryId: number): Awaitable<boolean> {
    return w.outbox.isPending(deliveryId);
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
  async record(w: Work, deliveryId: number, outcome: AttemptRecord, now: number): Promise<Recorded | null> {
    const logged = await w.outbox.recordAttempt(deliveryId, outcome, now);
    if (!logged) return null;
    let turnedFailing = false;
    if (outcome.status === "delivered") {
      await w.webhooks.markDelivered(logged.webhookId);
    } else if (outcome.status === "failed") {
      const failed = await w.webhooks.countFailedDelivery(logged.webhookId, now, this.failingAfter);
      turnedFailing = failed === this.failingAfter;
    }
    return { attempt: logged.attempt, turnedFailing };
  }

  /**
   * Removes deliveries finished before `cutoff` (with their attempts) and
   * events older than `cutoff` that no delivery needs any more.
   * @returns how many rows were removed.
   */
  cleanup(w: Work, cutoff: number): Awaitable<number> {
    return w.outbox.prune(cutoff);
  }
}
