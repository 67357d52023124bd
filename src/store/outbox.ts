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

/** How many deliveries of one scope are due (of webhooks free to take them). */
export interface DueScope {
  /** "global" or an org id. */
  scope: string;
  /** Due deliveries of the scope, 1 or more. */
  due: number;
}

/** One claim the domain decided (webhooks/shares.ts planClaims): up to `count` due deliveries of `scope`. */
export interface ScopeClaim {
  /** "global" or an org id. */
  scope: string;
  count: number;
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
 * log). webhooks/outbox.ts keeps the decisions (who is subscribed,
 * fairness, retries, health). Times are Unix milliseconds.
 */
export interface OutboxStore {
  /** Writes the event and one pending delivery, due at `now`, per webhook of `webhookIds`. */
  enqueue(event: OutboxEvent, webhookIds: readonly string[], now: number): Awaitable<void>;
  /**
   * The scopes with deliveries due at `now` (next_attempt_at <= now) of
   * webhooks not in `busy` and free to take them (no delivery of the
   * webhook leased by another node), with how many each has, in no set order.
   */
  dueScopes(now: number, busy: ReadonlySet<string>): Awaitable<DueScope[]>;
  /**
   * Runs the claims it is given, deciding nothing: for each of `claims`, up
   * to `count` due deliveries of its scope, of the same webhooks as
   * dueScopes(), oldest due first (then oldest queued). A delivery is
   * claimed until its attempt is recorded, by one node only: a claim may
   * come back shorter when another node took them first.
   * @returns one list per claim, in the order of `claims`.
   */
  claim(now: number, busy: ReadonlySet<string>, claims: readonly ScopeClaim[]): Awaitable<DueDelivery[][]>;
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
