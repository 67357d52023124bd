import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { EventSink, Origin, SecretEvent } from "../domain/events.js";
import type { Work } from "../store/work.js";

/** Where the gauges read their value at scrape time (inside the group commit). */
export interface MetricSources {
  /** Secrets that count toward the free tier (active or sealed). */
  activeSecrets: () => Promise<number>;
  /** Webhook deliveries still pending. */
  outboxPending: () => Promise<number>;
}

/**
 * The vault's Prometheus metrics (prom-client), one Registry per vault (no
 * module-level state). Labels are route templates, methods, status codes,
 * event types and outcomes only: never a key, id, token or value.
 */
export class VaultMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<"method" | "route" | "status">;
  private readonly duration: Histogram<"method" | "route">;
  private readonly authFailures: Counter;
  private readonly events: Counter<"type">;
  private readonly batchSize: Histogram;
  private readonly commitSeconds: Histogram;
  private readonly deliveries: Counter<"outcome">;
  private readonly acmeRenewals: Counter<"outcome">;

  /**
   * @param sources the gauges' values, read at each scrape.
   * @param options.processMetrics also the process's own metrics (CPU,
   *   memory, event loop lag, GC: prom-client's default metrics); on in the
   *   server, off in tests that build many vaults.
   */
  constructor(sources: MetricSources, options: { processMetrics?: boolean } = {}) {
    const registers = [this.registry];
    this.requests = new Counter({
      name: "vault_http_requests_total",
      help: "HTTP requests answered, by method, route template and status.",
      labelNames: ["method", "route", "status"],
      registers,
    });
    this.duration = new Histogram({
      name: "vault_http_request_duration_seconds",
      help: "Time from a request's arrival at the app to its answer, seconds, by method and route template.",
      labelNames: ["method", "route"],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    });
    this.authFailures = new Counter({
      name: "vault_auth_failures_total",
      help: "Requests answered 401 (missing, invalid, expired or revoked token).",
      registers,
    });
    this.events = new Counter({
      name: "vault_secret_events_total",
      help: "Secret lifecycle events: secret.created, .read, .updated, .deleted, .burned, .sealed, .expired.",
      labelNames: ["type"],
      registers,
    });
    this.batchSize = new Histogram({
      name: "vault_group_commit_batch_size",
      help: "Requests (and background writes) committed together by one COMMIT.",
      buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500],
      registers,
    });
    this.commitSeconds = new Histogram({
      name: "vault_group_commit_duration_seconds",
      help: "Time of a batch's COMMIT with its pre-commit writes (the fsync), seconds.",
      buckets: [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers,
    });
    this.deliveries = new Counter({
      name: "vault_webhook_delivery_attempts_total",
      help: "Webhook delivery attempts by outcome: delivered, retrying (failed, will retry), failed (no more attempts).",
      labelNames: ["outcome"],
      registers,
    });
    this.acmeRenewals = new Counter({
      name: "vault_acme_renewals_total",
      help: "ACME certificate orders attempted (the first one and renewals), by outcome: success or failure.",
      labelNames: ["outcome"],
      registers,
    });
    new Gauge({
      name: "vault_active_secrets",
      help: "Secrets that are active or sealed (what the free tier counts).",
      registers,
      async collect() {
        this.set(await sources.activeSecrets());
      },
    });
    new Gauge({
      name: "vault_webhook_outbox_pending",
      help: "Webhook deliveries waiting to be sent (the outbox depth).",
      registers,
      async collect() {
        this.set(await sources.outboxPending());
      },
    });
    if (options.processMetrics === true) collectDefaultMetrics({ register: this.registry });
  }

  /**
   * Counts one answered request.
   * @param route the route template (`/secrets/:key{.+}`), never the path.
   * @param seconds time to answer, seconds.
   */
  observeRequest(method: string, route: string, status: number, seconds: number): void {
    this.requests.inc({ method, route, status: String(status) });
    this.duration.observe({ method, route }, seconds);
    if (status === 401) this.authFailures.inc();
  }

  /** A committed batch: its size and its COMMIT time in milliseconds (GroupCommit.onCommitted). */
  observeCommit(batchSize: number, ms: number): void {
    this.batchSize.observe(batchSize);
    this.commitSeconds.observe(ms / 1000);
  }

  /** One recorded webhook delivery attempt. */
  observeDelivery(outcome: "delivered" | "retrying" | "failed"): void {
    this.deliveries.inc({ outcome });
  }

  /** One ACME certificate order attempted (docs/deploy.md "Certificates by ACME"). */
  observeAcmeRenewal(outcome: "success" | "failure"): void {
    this.acmeRenewals.inc({ outcome });
  }

  /**
   * An EventSink that counts secret events by type (combined with the audit
   * log and the outbox). An event is counted once its unit of work
   * committed (Work.afterCommit): a unit that rolls back counts nothing, and
   * one the PostgreSQL group commit runs again counts once (UnitOfWork.run).
   */
  get sink(): EventSink {
    return {
      secretEvent: (w: Work, event: SecretEvent, _origin: Origin) => {
        const type = event.type;
        w.afterCommit(() => this.events.inc({ type }));
      },
      secretsPruned: () => {},
      requestEvent: () => {},
    };
  }
}
