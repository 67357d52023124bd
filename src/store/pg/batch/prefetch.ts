import { GLOBAL_SCOPE } from "../../../model/records.js";
import type { Webhook } from "../../../model/records.js";
import type { Awaitable } from "../../work.js";
import type { Subscriber, WebhookRecord, WebhookScopeQuery, WebhookStore } from "../../webhooks.js";
import type { WriteBehind } from "./write-behind.js";

/**
 * A unit of work's webhook store that reads the subscribers of a secret
 * change ahead of the change (docs/performance.md, "PostgreSQL"): the
 * change's statement (the counted read's guarded UPDATE, a create's INSERT)
 * is then the last one of its round trip, and the subscribers' SELECT,
 * sent just before it on the pipelined connection, costs no round trip of
 * its own. When the change's event asks for its scope's subscribers
 * (webhooks/outbox.ts), it gets the answer already in flight, read in
 * the same transaction.
 *
 * One per unit of work, handed to its Work as `webhooks`; every other
 * method is the inner store's. A prefetched answer serves one lookup of its
 * scope (the event of the change it was read for); a later lookup reads
 * afresh, so a webhook the same unit created or deleted meanwhile is never
 * missed.
 */
export class PrefetchingWebhookStore implements WebhookStore {
  private ahead: { orgId: string | null; list: Promise<Subscriber[]> } | undefined;

  /**
   * @param inner the unit's webhook store (store/sql/webhooks.ts), which reads.
   * @param behind the unit's write-behind statements: a prefetch nobody
   *   consumed is still settled (and its failure fails the unit) before the
   *   unit answers.
   */
  constructor(
    private readonly inner: WebhookStore,
    private readonly behind?: WriteBehind,
  ) {}

  /**
   * Sends the SELECT of `scope`'s subscribers now, without waiting ("global"
   * or an org id). Call it right before the change's statement.
   */
  prefetch(scope: string): void {
    const orgId = scope === GLOBAL_SCOPE ? null : scope;
    if (this.ahead?.orgId === orgId) return;
    const list = Promise.resolve(this.inner.subscribers(orgId));
    this.behind?.track(list);
    // Its failure is the unit's (tracked above, or the change's statement fails with the aborted transaction).
    list.catch(() => {});
    this.ahead = { orgId, list };
  }

  /** WebhookStore.subscribers: the prefetched answer for its scope, once; else the inner store's read. */
  subscribers(orgId: string | null): Awaitable<Subscriber[]> {
    const ahead = this.ahead;
    if (ahead === undefined || ahead.orgId !== orgId) return this.inner.subscribers(orgId);
    this.ahead = undefined;
    return ahead.list;
  }

  /** WebhookStore.countInScope, the inner store's. */
  countInScope(orgId: string | null): Awaitable<number> {
    return this.inner.countInScope(orgId);
  }

  /** WebhookStore.insert, the inner store's. */
  insert(webhook: Webhook): Awaitable<WebhookRecord> {
    return this.inner.insert(webhook);
  }

  /** WebhookStore.list, the inner store's. */
  list(query: WebhookScopeQuery, afterSeq: number, limit: number): Awaitable<WebhookRecord[]> {
    return this.inner.list(query, afterSeq, limit);
  }

  /** WebhookStore.get, the inner store's. */
  get(query: WebhookScopeQuery, id: string): Awaitable<WebhookRecord | undefined> {
    return this.inner.get(query, id);
  }

  /** WebhookStore.remove, the inner store's. */
  remove(id: string): Awaitable<void> {
    return this.inner.remove(id);
  }

  /** WebhookStore.rotateSigning, the inner store's. */
  rotateSigning(id: string, previousUntil: number): Awaitable<number | undefined> {
    return this.inner.rotateSigning(id, previousUntil);
  }

  /** WebhookStore.markDelivered, the inner store's. */
  markDelivered(id: string): Awaitable<void> {
    return this.inner.markDelivered(id);
  }

  /** WebhookStore.countFailedDelivery, the inner store's. */
  countFailedDelivery(id: string, now: number, failingAfter: number): Awaitable<number | undefined> {
    return this.inner.countFailedDelivery(id, now, failingAfter);
  }
}
