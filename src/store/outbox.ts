import type { AttemptRecord, DueDelivery } from "../model/records.js";
import type { DeliveryAttempt } from "../model/records.js";
import type { Awaitable } from "../model/awaitable.js";

/** One secret event as the outbox stores it (its time is enqueue()'s `now`). */
export interface OutboxEvent {
  /** evt_... */
  id: string;
  type: string;
  /** The exact JSON body every attempt signs and sends; never a value. */
  body: string;
}

/** What the delivery worker asks for. Times in Unix milliseconds. */
export interface DueClaim {
  /** Deliveries whose next attempt is due at or before this. */
  now: number;
  /** At most this many scopes, and at most this many deliveries per scope. */
  limit: number;
  /** Webhooks left out entirely (they have attempts in flight). */
  busy: ReadonlySet<string>;
  /**
   * The scope the previous claim served first: this one starts with the next
   * scope after it in a fixed order, wrapping around. undefined: from the first.
   */
  afterScope: string | undefined;
  /**
   * At most this many deliveries of any one scope (the worker's per-scope
   * share, domain/webhook-shares.ts), unless `scopeLimits` names the scope.
   */
  scopeLimit: number;
  /** Per-scope limits below `scopeLimit`, by scope ("global" or an org id); 0 leaves the scope out. */
  scopeLimits: ReadonlyMap<string, number>;
}

/** The due deliveries of one scope, oldest due first. */
export interface DueBatch {
  /** "global" or an org id. */
  scope: string;
  deliveries: DueDelivery[];
}

/** What recordAttempt() changed. */
export interface AttemptLogged {
  /** The attempt's number, 1 for the first. */
  attempt: number;
  webhookId: string;
}

/** A logged attempt and its id (the deliveries list cursor). */
export interface StoredAttempt extends DeliveryAttempt {
  id: number;
}

/**
 * The outbox tables (schema.sql section 3): `webhook_events` (one row per
 * queued event), `webhook_deliveries` (one per event and subscribed webhook:
 * pending until delivered or failed) and `webhook_attempts` (the attempt
 * log). domain/webhook-outbox.ts keeps the decisions (who is subscribed,
 * fairness, retries, health). Times are Unix milliseconds.
 */
export interface OutboxStore {
  /** Writes the event and one pending delivery, due at `now`, per webhook of `webhookIds`. */
  enqueue(event: OutboxEvent, webhookIds: readonly string[], now: number): Awaitable<void>;
  /**
   * Claims pending deliveries due at `claim.now`, of webhooks not busy, by
   * scope: at most `claim.limit` scopes that have any, in a fixed order
   * starting after `claim.afterScope` (wrapping), each with at most
   * `claim.limit` deliveries and at most its scope's limit
   * (`claim.scopeLimits`, else `claim.scopeLimit`), oldest due first (then
   * oldest queued). A scope whose limit is 0 is left out. A delivery is
   * claimed until its attempt is recorded.
   */
  claimDue(claim: DueClaim): Awaitable<DueBatch[]>;
  /** When the first pending delivery of a webhook not in `busy` is due, or null when none is. */
  nextDueAt(busy: ReadonlySet<string>): Awaitable<number | null>;
  /** True while the delivery is pending (not delivered, failed or deleted). */
  isPending(deliveryId: number): Awaitable<boolean>;
  /**
   * Counts an attempt on a pending delivery, moves it to `outcome.status`
   * (retrying stays pending, due at `outcome.nextAttemptAt`, or `now` when
   * null) and logs the attempt at `now`.
   * @returns the attempt number and webhook, or undefined when the delivery
   *   is no longer pending (finished, or its webhook was deleted).
   */
  recordAttempt(deliveryId: number, outcome: AttemptRecord, now: number): Awaitable<AttemptLogged | undefined>;
  /** Pending deliveries of every webhook: the outbox depth. */
  pendingCount(): Awaitable<number>;
  /**
   * Removes deliveries finished before `cutoff` (with their attempts) and
   * events created before `cutoff` that no delivery refers to.
   * @returns how many rows were removed.
   */
  prune(cutoff: number): Awaitable<number>;
  /** Up to `limit` logged attempts of a webhook with ids below `beforeId`, newest first. */
  attempts(webhookId: string, beforeId: number, limit: number): Awaitable<StoredAttempt[]>;
}
