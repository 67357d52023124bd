import type { Webhook } from "../model/records.js";
import type { Awaitable } from "../model/awaitable.js";

/** A stored webhook: the webhook and its position in creation order (the list cursor). */
export interface WebhookRecord extends Webhook {
  /** Creation order within the table; the list cursor continues after it. */
  seq: number;
}

/**
 * Which webhooks a lookup may return: those of one scope, narrowed by a
 * viewer's scoped-key prefix.
 */
export interface WebhookScopeQuery {
  /** null: the global webhooks; else one org's. */
  orgId: string | null;
  /**
   * A scoped key's prefix: only webhooks whose own key prefix starts with it.
   * null: every webhook of the scope.
   */
  viewerPrefix: string | null;
}

/** A webhook as the outbox matches secret events against it. */
export interface Subscriber {
  id: string;
  /** Event types, or `["*"]`. */
  events: string[];
  /** Only keyed secrets under this prefix; null: every event of the scope. */
  keyPrefix: string | null;
}

/**
 * The `webhooks` table (schema.sql section 3): registrations, the
 * subscriber lookup of the outbox, and each webhook's health (consecutive
 * failed deliveries, failing since). webhooks/registry.ts and
 * webhooks/outbox.ts keep the decisions. Times are Unix milliseconds.
 */
export interface WebhookStore {
  /** How many webhooks the scope has (null: global). */
  countInScope(orgId: string | null): Awaitable<number>;
  /** Inserts a webhook, healthy (no failed deliveries). */
  insert(webhook: Webhook): Awaitable<WebhookRecord>;
  /** Up to `limit` visible webhooks of a scope created after `afterSeq` (0: from the start), oldest first. */
  list(query: WebhookScopeQuery, afterSeq: number, limit: number): Awaitable<WebhookRecord[]>;
  /** The webhook `id` when it is in the scope and visible, else undefined. */
  get(query: WebhookScopeQuery, id: string): Awaitable<WebhookRecord | undefined>;
  /** Deletes the webhook; its deliveries and attempt log go with it. */
  remove(id: string): Awaitable<void>;
  /** Every webhook of a scope (null: global), for matching events. */
  subscribers(orgId: string | null): Awaitable<Subscriber[]>;
  /**
   * Rotates the webhook's signing secret: the next signing generation, and
   * the previous one still signs until `previousUntil` (Unix milliseconds).
   * @returns the new generation, or undefined when the webhook is gone.
   */
  rotateSigning(id: string, previousUntil: number): Awaitable<number | undefined>;
  /** A delivery succeeded: zero consecutive failed deliveries, not failing. */
  markDelivered(id: string): Awaitable<void>;
  /**
   * A delivery ended failed: counts one more consecutive failed delivery;
   * when the count reaches `failingAfter` and the webhook was not failing,
   * it is failing from `now` on.
   * @returns the count after this one, or undefined when the webhook is gone.
   */
  countFailedDelivery(id: string, now: number, failingAfter: number): Awaitable<number | undefined>;
}
