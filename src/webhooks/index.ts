import { randomSecret } from "../crypto/tokens.js";
import { WebhookRegistry } from "../domain/webhooks.js";
import { DeliveryQueue, WebhookOutbox } from "../domain/webhook-outbox.js";
import type { AuditRecorder } from "../domain/webhooks.js";
import type { Logger } from "../ops/log.js";
import type { UnitOfWork, Work } from "../store/work.js";
import { systemLookup } from "./address-guard.js";
import type { Lookup } from "./address-guard.js";
import { webhookSigningSecret } from "./signing.js";
import { createHttpsTransport } from "./transport.js";
import type { Transport } from "./transport.js";
import { DeliveryWorker } from "./worker.js";

/**
 * The webhook settings (decisions.md section 1). Every field is optional
 * for tests; server.ts passes the configured values.
 */
export interface WebhookSettings {
  /** VAULT_WEBHOOK_SECRET; default a random one (tests). */
  secret?: string | undefined;
  /** VAULT_WEBHOOK_ALLOW_PRIVATE; default false. */
  allowPrivate?: boolean | undefined;
  /** VAULT_WEBHOOK_TIMEOUT_MS; default 10000. */
  timeoutMs?: number | undefined;
  /** VAULT_WEBHOOK_MAX_ATTEMPTS; default 8. */
  maxAttempts?: number | undefined;
  /** VAULT_WEBHOOK_RETRY_BASE_MS; default 1000. */
  retryBaseMs?: number | undefined;
  /** Extra trusted CA (PEM) for in-process tests; deployments use NODE_EXTRA_CA_CERTS. */
  ca?: string | undefined;
  /** Name resolution for the address guard (creation and connection); default the system resolver. */
  lookup?: Lookup | undefined;
  /** Jitter source, uniform [0, 1); default Math.random. */
  random?: (() => number) | undefined;
  /** VAULT_WEBHOOKS_PER_SCOPE; default 25. */
  perScope?: number | undefined;
  /** VAULT_WEBHOOK_FAILING_AFTER; default 5. */
  failingAfter?: number | undefined;
  /** VAULT_WEBHOOK_SCOPE_CONCURRENCY: delivery slots one scope may hold at once; default 4 (of 8). */
  scopeConcurrency?: number | undefined;
  /** Replaces the HTTPS transport (tests). */
  transport?: Transport | undefined;
}

/** The webhook parts of a vault. */
export interface Webhooks {
  registry: WebhookRegistry;
  /** The EventSink that queues deliveries; combine it into the lifecycle's sink. */
  outbox: WebhookOutbox;
  queue: DeliveryQueue;
  /** Not running until start() (server.ts); tests call tick(). */
  worker: DeliveryWorker;
  /** What the routes need to validate a webhook URL. */
  allowPrivate: boolean;
  lookup: Lookup;
}

export interface CreateWebhooksDeps {
  tx: UnitOfWork<Work>;
  log: Logger;
  /** Current time, Unix milliseconds. */
  now: () => number;
  version: string;
  settings?: WebhookSettings | undefined;
  /** Where `webhook.created` / `webhook.deleted` / `webhook.rotated` / `webhook.tested` are recorded (docs/audit.md). */
  audit?: AuditRecorder | undefined;
  /** Told of each recorded delivery attempt's outcome (metrics). */
  onDeliveryOutcome?: ((outcome: "delivered" | "retrying" | "failed") => void) | undefined;
  /** Cache each scope's subscribers in memory (one node only; default true). */
  cacheSubscribers?: boolean | undefined;
}

/**
 * Builds the webhook registry, the outbox sink, the delivery queue and the
 * (stopped) delivery worker, wired so that a queued event wakes the worker.
 * The engine wiring is the caller's: with the group commit, call
 * `outbox.invalidate()` on every rollback (vault.ts: the engine's onRollback hook).
 */
export function createWebhooks(deps: CreateWebhooksDeps): Webhooks {
  const settings = deps.settings ?? {};
  const allowPrivate = settings.allowPrivate ?? false;
  const lookup = settings.lookup ?? systemLookup;
  const queue = new DeliveryQueue(settings.failingAfter ?? 5);
  const secret = settings.secret ?? randomSecret();
  const worker = new DeliveryWorker({
    queue,
    tx: deps.tx,
    transport:
      settings.transport ?? createHttpsTransport({ timeoutMs: settings.timeoutMs ?? 10_000, allowPrivate, lookup, ca: settings.ca }),
    log: deps.log,
    now: deps.now,
    secret,
    version: deps.version,
    maxAttempts: settings.maxAttempts ?? 8,
    retryBaseMs: settings.retryBaseMs ?? 1000,
    scopeConcurrency: settings.scopeConcurrency,
    random: settings.random,
    onOutcome: deps.onDeliveryOutcome,
  });
  const outbox = new WebhookOutbox({ now: deps.now, onQueued: () => worker.wake(), cacheSubscribers: deps.cacheSubscribers });
  const registry = new WebhookRegistry({
    now: deps.now,
    audit: deps.audit,
    perScope: settings.perScope ?? 25,
    onChange: () => outbox.invalidate(),
    signingSecret: (webhookId, generation) => webhookSigningSecret(secret, webhookId, generation),
    onQueued: () => worker.wake(),
  });
  return { registry, outbox, queue, worker, allowPrivate, lookup };
}
