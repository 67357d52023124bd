import { DELIVERY_RETENTION_MS } from "./outbox.js";
import type { DeliveryQueue, DueDelivery } from "./outbox.js";
import { ScopeShares } from "./shares.js";
import { DEFAULT_WEBHOOK_SCOPE_CONCURRENCY } from "../config.js";
import type { Logger } from "../log/log.js";
import { GLOBAL_SCOPE } from "../model/records.js";
import type { UnitOfWork, Work } from "../store/work.js";
import { deliveryHeaders } from "./signing.js";
import type { Transport } from "./transport.js";
import { attemptOutcome } from "./retry.js";

/** The loop's shortest sleep after a round that found nothing to do, milliseconds. */
const MIN_IDLE_DELAY_MS = 250;

export interface DeliveryWorkerDeps {
  queue: DeliveryQueue;
  /** Every read and write of the outbox runs in a unit of work of this. */
  tx: UnitOfWork<Work>;
  transport: Transport;
  log: Logger;
  /** Current time, Unix milliseconds. */
  now: () => number;
  /** VAULT_WEBHOOK_SECRET. */
  secret: string;
  /**
   * VAULT_WEBHOOK_ORG_GLOBAL_SIGNATURE: an org webhook's deliveries also
   * carry X-Vault-Signature under `secret` (default true, the contract's
   * headers: docs/webhooks.md "Headers").
   */
  orgGlobalSignature?: boolean | undefined;
  /** Package version, for the User-Agent. */
  version: string;
  /** VAULT_WEBHOOK_MAX_ATTEMPTS: attempts per delivery, the first included. */
  maxAttempts: number;
  /** VAULT_WEBHOOK_RETRY_BASE_MS. */
  retryBaseMs: number;
  /** Uniform [0, 1) for the jitter; default Math.random. */
  random?: (() => number) | undefined;
  /** Attempts in flight at once; default 8. */
  concurrency?: number | undefined;
  /**
   * VAULT_WEBHOOK_SCOPE_CONCURRENCY: slots one scope (the global one, or an
   * org) may hold at once; default DEFAULT_WEBHOOK_SCOPE_CONCURRENCY (config.ts: 4, half the slots).
   */
  scopeConcurrency?: number | undefined;
  /** Longest sleep of the background loop, milliseconds; default 5000. */
  pollIntervalMs?: number | undefined;
  /** Called with each recorded attempt's outcome (metrics). */
  onOutcome?: ((outcome: "delivered" | "retrying" | "failed") => void) | undefined;
}

/**
 * The webhook delivery worker (docs/contract.md §10): at-least-once
 * delivery of the outbox.
 *
 * Each round claims due deliveries (in a unit of work, so only committed
 * events are sent), posts each with the signed headers (one
 * webhook's deliveries one after another, in event order; different
 * webhooks in parallel), and records the attempt: a 2xx marks it
 * delivered; anything else schedules the next attempt after
 * retryDelayMs(), or marks it failed after maxAttempts, or at once when
 * the webhook is failing (DeliveryQueue.record). The free slots are shared
 * round-robin between scopes (DeliveryQueue.due), each scope holding at
 * most its share of them (ScopeShares: smaller for a scope whose attempts
 * time out).
 * Requests never wait for it: they only write outbox rows and call wake().
 * A pending delivery survives a restart (it is a row); one in flight when
 * the process dies is attempted again.
 *
 * Tests drive it with tick() and a fake clock; start() runs it in the
 * background with real timers.
 */
export class DeliveryWorker {
  private readonly inFlight = new Map<number, Promise<void>>();
  /** Webhooks with a delivery in flight: their other deliveries wait (claim()). */
  private readonly busy = new Set<string>();
  private readonly abort = new AbortController();
  private readonly random: () => number;
  private readonly concurrency: number;
  private readonly shares: ScopeShares;
  private readonly pollIntervalMs: number;
  private timer: NodeJS.Timeout | undefined;
  private started = false;
  private stopped = false;
  private looping: Promise<void> | undefined;
  private rerun = false;
  private lastCleanup = Number.NEGATIVE_INFINITY;

  constructor(private readonly deps: DeliveryWorkerDeps) {
    this.random = deps.random ?? Math.random;
    this.concurrency = deps.concurrency ?? 8;
    this.shares = new ScopeShares({ concurrency: this.concurrency, perScope: deps.scopeConcurrency ?? DEFAULT_WEBHOOK_SCOPE_CONCURRENCY });
    this.pollIntervalMs = deps.pollIntervalMs ?? 5000;
  }

  /**
   * One round, awaited to the end: claims what is due now and attempts it.
   * @returns once every attempt started by this round is recorded, with how many were attempted.
   */
  async tick(): Promise<number> {
    const started = await this.claim();
    await Promise.all(started);
    return started.length;
  }

  /** Starts the background loop (assembly/server.ts). Idempotent. */
  start(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    this.schedule(0);
  }

  /**
   * Asks the background loop to look at the outbox soon (an event was
   * queued, or an attempt finished). Does nothing before start().
   */
  wake(): void {
    if (!this.started || this.stopped) return;
    this.schedule(0);
  }

  /**
   * Graceful stop: no new attempts; attempts in flight are aborted (they are
   * not counted and stay pending, to be sent again after a restart) and
   * awaited. Call before the group commit closes.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.abort.abort();
    await this.looping;
    await Promise.all([...this.inFlight.values()]);
    this.deps.transport.close();
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.loop();
    }, Math.max(0, delayMs));
    this.timer.unref();
  }

  /** One round of the background loop, then sleep until the next due delivery (at most pollIntervalMs). */
  private async loop(): Promise<void> {
    if (this.stopped) return;
    if (this.looping) {
      this.rerun = true;
      return;
    }
    this.rerun = false;
    let claimed = 0;
    let next: number | null = null;
    const round = (async () => {
      try {
        claimed = (await this.claim()).length;
        await this.cleanupIfDue();
        if (!this.stopped && this.inFlight.size < this.concurrency) {
          next = await this.deps.tx.run((w) => this.deps.queue.nextDueAt(w, this.busy));
        }
      } catch (err) {
        if (!this.stopped) this.deps.log.error({ err }, "webhook worker round failed");
      }
    })();
    this.looping = round;
    await round;
    this.looping = undefined;
    if (this.stopped) return;
    let delay = this.pollIntervalMs;
    if (this.rerun) delay = 0;
    else if (this.inFlight.size < this.concurrency && next !== null) {
      // Something due that this round did not claim should not happen; never spin on it.
      const floor = claimed === 0 ? MIN_IDLE_DELAY_MS : 0;
      delay = Math.min(delay, Math.max(floor, next - this.deps.now()));
    }
    if (this.timer === undefined) this.schedule(delay);
  }

  /**
   * Claims due deliveries up to the free concurrency and starts them;
   * returns their completions. One webhook's deliveries are sent one after
   * another, in the order their events happened (a `secret.read` arrives
   * before the `secret.burned` that follows it); different webhooks in
   * parallel. A webhook with attempts still in flight is left for a later
   * round, so that order holds across rounds too.
   */
  private async claim(): Promise<Promise<void>[]> {
    if (this.stopped) return [];
    const room = this.concurrency - this.inFlight.size;
    if (room <= 0) return [];
    const limits = this.shares.limits();
    const due = await this.deps.tx.run((w) => this.deps.queue.due(w, this.deps.now(), room, this.busy, limits));
    const byWebhook = new Map<string, DueDelivery[]>();
    for (const delivery of due) {
      // Another claim may have started this webhook meanwhile.
      if (this.stopped || this.busy.has(delivery.webhookId)) continue;
      const chain = byWebhook.get(delivery.webhookId);
      if (chain) chain.push(delivery);
      else byWebhook.set(delivery.webhookId, [delivery]);
    }
    const started: Promise<void>[] = [];
    for (const [webhookId, chain] of byWebhook) started.push(...this.sendInOrder(webhookId, chain));
    return started;
  }

  /**
   * Attempts one webhook's deliveries one after another; the webhook is
   * busy until the last is recorded. A delivery whose turn comes after its
   * webhook was deleted is not sent.
   */
  private sendInOrder(webhookId: string, chain: DueDelivery[]): Promise<void>[] {
    this.busy.add(webhookId);
    let previous: Promise<void> = Promise.resolve();
    return chain.map((delivery, i) => {
      this.shares.started(delivery.scope);
      let timedOut: boolean | null = null;
      const done = previous
        .catch(() => undefined)
        .then(async () => {
          if (i > 0 && !(await this.stillPending(delivery))) return;
          timedOut = await this.attempt(delivery);
        })
        .finally(() => {
          this.shares.finished(delivery.scope, timedOut);
          this.inFlight.delete(delivery.deliveryId);
          if (i === chain.length - 1) this.busy.delete(webhookId);
          this.wake();
        });
      this.inFlight.set(delivery.deliveryId, done);
      previous = done;
      return done;
    });
  }

  /** False when the delivery is no longer pending (its webhook was deleted), or during a stop. Never rejects. */
  private async stillPending(delivery: DueDelivery): Promise<boolean> {
    if (this.stopped) return false;
    try {
      return await this.deps.tx.run((w) => this.deps.queue.isPending(w, delivery.deliveryId));
    } catch (err) {
      if (!this.stopped) this.deps.log.error({ err, webhook_id: delivery.webhookId }, "webhook delivery state not read");
      return false;
    }
  }

  /**
   * Makes one attempt and records it.
   * @returns whether it ran into the timeout (counted against its scope's
   *   share), or null when a stop aborted it. Never rejects.
   */
  private async attempt(delivery: DueDelivery): Promise<boolean | null> {
    const result = await this.deps.transport.send(
      { url: delivery.url, body: delivery.body, headers: deliveryHeaders(delivery, this.deps.secret, this.deps.version, this.deps.now(), {
          globalSignature: delivery.scope === GLOBAL_SCOPE || this.deps.orgGlobalSignature !== false,
        }) },
      this.abort.signal,
    );
    // A stop aborted the attempt: it is not counted and the delivery stays due.
    if (this.stopped && !result.ok) return null;
    const timedOut = !result.ok && result.timedOut === true;
    const policy = { maxAttempts: this.deps.maxAttempts, retryBaseMs: this.deps.retryBaseMs, random: this.random, now: this.deps.now };
    const record = attemptOutcome(delivery.attempts + 1, result, delivery.failing, policy);
    let recorded;
    try {
      recorded = await this.deps.tx.run((w) => this.deps.queue.record(w, delivery.deliveryId, record, this.deps.now()));
    } catch (err) {
      if (!this.stopped) this.deps.log.error({ err, webhook_id: delivery.webhookId }, "webhook attempt not recorded");
      return timedOut;
    }
    this.deps.onOutcome?.(record.status);
    const fields = { webhook_id: delivery.webhookId, event_id: delivery.eventId, attempt: delivery.attempts + 1 };
    if (recorded?.turnedFailing) {
      this.deps.log.warn({ webhook_id: delivery.webhookId }, "webhook marked failing: its deliveries keep failing; no more retries until one is delivered");
    }
    if (record.status === "delivered") this.deps.log.debug(fields, "webhook delivered");
    else if (record.status === "retrying") this.deps.log.info(Object.assign(fields, { error: record.error }), "webhook attempt failed; will retry");
    else this.deps.log.warn(Object.assign(fields, { error: record.error }), "webhook delivery failed after the last attempt");
    return timedOut;
  }

  /** Removes finished deliveries older than the retention period, at most once an hour. */
  private async cleanupIfDue(): Promise<void> {
    if (this.stopped) return;
    const now = this.deps.now();
    if (now - this.lastCleanup < 60 * 60 * 1000) return;
    this.lastCleanup = now;
    await this.deps.tx.run((w) => this.deps.queue.cleanup(w, now - DELIVERY_RETENTION_MS));
  }

  /** Runs the retention cleanup now (tests). @returns rows removed. */
  cleanupNow(): Promise<number> {
    const now = this.deps.now();
    return this.deps.tx.run((w) => this.deps.queue.cleanup(w, now - DELIVERY_RETENTION_MS));
  }
}
