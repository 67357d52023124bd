import { GLOBAL_SCOPE } from "../../model/records.js";
import type { Subscriber, WebhookStore } from "../webhooks.js";
import type { WriteBehind } from "./write-behind.js";

/**
 * The webhook subscribers of a secret change, read ahead of the change
 * (docs/performance.md, "PostgreSQL"): the change's statement (the counted
 * read's guarded UPDATE, a create's INSERT) is then the last one of its
 * round trip, and the subscribers' SELECT, sent just before it on the
 * pipelined connection, costs no round trip of its own. When the change's
 * event asks for its scope's subscribers (domain/webhook-outbox.ts), it gets
 * the answer already in flight, read in the same transaction.
 *
 * One per unit of work. A prefetched answer serves one lookup of its scope
 * (the event of the change it was read for); a later lookup reads afresh,
 * so a webhook the same unit created or deleted meanwhile is never missed.
 */
export class SubscriberPrefetch {
  private ahead: { orgId: string | null; list: Promise<Subscriber[]> } | undefined;
  /** The store's own subscribers(), which reads. */
  private readonly read: WebhookStore["subscribers"];

  /**
   * @param webhooks the unit's webhook store; its subscribers() is served
   *   from the prefetched answer when there is one.
   * @param behind the unit's write-behind statements: a prefetch nobody
   *   consumed is still settled (and its failure fails the unit) before the
   *   unit answers.
   */
  constructor(
    private readonly webhooks: WebhookStore,
    private readonly behind?: WriteBehind,
  ) {
    const read = webhooks.subscribers.bind(webhooks);
    webhooks.subscribers = (orgId) => {
      const ahead = this.ahead;
      if (ahead === undefined || ahead.orgId !== orgId) return read(orgId);
      this.ahead = undefined;
      return ahead.list;
    };
    this.read = read;
  }

  /**
   * Sends the SELECT of `scope`'s subscribers now, without waiting ("global"
   * or an org id). Call it right before the change's statement.
   */
  prefetch(scope: string): void {
    const orgId = scope === GLOBAL_SCOPE ? null : scope;
    if (this.ahead?.orgId === orgId) return;
    const list = Promise.resolve(this.read(orgId));
    this.behind?.track(list);
    // Its failure is the unit's (tracked above, or the change's statement fails with the aborted transaction).
    list.catch(() => {});
    this.ahead = { orgId, list };
  }
}
