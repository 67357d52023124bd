import { SETTINGS } from "../config.js";
import { randomSecret } from "../crypto/tokens.js";
import { WebhookRegistry } from "./registry.js";
import { DeliveryQueue, WebhookOutbox } from "./outbox.js";
import type { AuditRecorder } from "./registry.js";
import type { Logger } from "../log/log.js";
import type { UnitOfWork, Work } from "../store/work.js";
import { systemLookup } from "./address-guard.js";
import type { Lookup } from "./address-guard.js";
import { webhookSigningSecret } from "./signing.js";
import { createHttpsTransport } from "./transport.js";
import type { Transport } from "./transport.js";
import { DeliveryWorker } from "./worker.js";

/**
 * The webhook settings (docs/configuration.md). assembly/server.ts passes every
 * configured value; a field left out (tests) takes the settings table's
 * default (WEBHOOK_DEFAULTS).
 */
export interface WebhookSettings {
  /** VAULT_WEBHOOK_SECRET; default a random one (tests). */
  secret?: string | undefined;
  /** VAULT_WEBHOOK_ALLOW_PRIVATE. */
  allowPrivate?: boolean | undefined;
  /** VAULT_WEBHOOK_ORG_GLOBAL_SIGNATURE: an org's deliveries also carry X-Vault-Signature (default true). */
  orgGlobalSignature?: boolean | undefined;
  /** VAULT_WEBHOOK_TIMEOUT_MS, milliseconds. */
  timeoutMs?: number | undefined;
  /** VAULT_WEBHOOK_MAX_ATTEMPTS. */
  maxAttempts?: number | undefined;
  /** VAULT_WEBHOOK_RETRY_BASE_MS, milliseconds. */
  retryBaseMs?: number | undefined;
  /** Extra trusted CA (PEM) for in-process tests; deployments use NODE_EXTRA_CA_CERTS. */
  ca?: string | undefined;
  /** Name resolution for the address guard (creation and connection); default the system resolver. */
  lookup?: Lookup | undefined;
  /** Jitter source, uniform [0, 1); default Math.random. */
  random?: (() => number) | undefined;
  /** VAULT_WEBHOOKS_PER_SCOPE. */
  perScope?: number | undefined;
  /** VAULT_WEBHOOK_FAILING_AFTER. */
  failingAfter?: number | undefined;
  /** VAULT_WEBHOOK_SCOPE_CONCURRENCY: delivery slots (of 8) one scope may hold at once. */
  scopeConcurrency?: number | undefined;
  /** Replaces the HTTPS transport (tests). */
  transport?: Transport | undefined;
}

/** The defaults of the tuned webhook settings: the settings table's (config/settings.ts), their only home. */
export const WEBHOOK_DEFAULTS = {
  allowPrivate: SETTINGS.webhookAllowPrivate.default,
  orgGlobalSignature: SETTINGS.webhookOrgGlobalSignature.default,
  timeoutMs: SETTINGS.webhookTimeoutMs.default,
  maxAttempts: SETTINGS.webhookMaxAttempts.default,
  retryBaseMs: SETTINGS.webhookRetryBaseMs.default,
  perScope: SETTINGS.webhooksPerScope.default,
  failingAfter: SETTINGS.webhookFailingAfter.default,
  scopeConcurrency: SETTINGS.webhookScopeConcurrency.default,
};

/** The settings given, each tuned one left out (or undefined) replaced by its WEBHOOK_DEFAULTS value. */
function resolved(given: WebhookSettings): WebhookSettings & typeof WEBHOOK_DEFAULTS {
  const out = Object.assign({}, given, WEBHOOK_DEFAULTS);
  for (const key of Object.keys(WEBHOOK_DEFAULTS) as (keyof typeof WEBHOOK_DEFAULTS)[]) {
    const value = given[key];
    if (value !== undefined) Object.assign(out, { [key]: value });
  }
  return out;
}

/** The webhook parts of a vault. */
export interface Webhooks {
  registry: WebhookRegistry;
  /** The EventSink that queues deliveries; combine it into the lifecycle's sink. */
  outbox: WebhookOutbox;
  queue: DeliveryQueue;
  /** Not running until start() (assembly/server.ts); tests call tick(). */
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
 * `outbox.invalidate()` on every rollback (assembly/vault.ts: the engine's onRollback hook).
 */
export function createWebhooks(deps: CreateWebhooksDeps): Webhooks {
  const settings = resolved(deps.settings ?? {});
  const allowPrivate = settings.allowPrivate;
  const lookup = settings.lookup ?? systemLookup;
  const queue = new DeliveryQueue(settings.failingAfter);
  const secret = settings.secret ?? randomSecret();
  const worker = new DeliveryWorker({
    queue,
    tx: deps.tx,
    transport:
      settings.transport ?? createHttpsTransport({ timeoutMs: settings.timeoutMs, allowPrivate, lookup, ca: settings.ca }),
    log: deps.log,
    now: deps.now,
    secret,
    orgGlobalSignature: settings.orgGlobalSignature,
    version: deps.version,
    maxAttempts: settings.maxAttempts,
    retryBaseMs: settings.retryBaseMs,
    scopeConcurrency: settings.scopeConcurrency,
    random: settings.random,
    onOutcome: deps.onDeliveryOutcome,
  });
  const outbox = new WebhookOutbox({ now: deps.now, onQueued: () => worker.wake(), cacheSubscribers: deps.cacheSubscribers });
  const registry = new WebhookRegistry({
    now: deps.now,
    audit: deps.audit,
    perScope: settings.perScope,
    onChange: () => outbox.invalidate(),
    signingSecret: (webhookId, generation) => webhookSigningSecret(secret, webhookId, generation),
    onQueued: () => worker.wake(),
  });
  return { registry, outbox, queue, worker, allowPrivate, lookup };
}
