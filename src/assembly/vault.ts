import type { Hono } from "hono";
import { createApp } from "../http/app.js";
import type { ShareSettings } from "../http/pages/routes.js";
import type { AppEnv } from "../http/context.js";
import type { ValueCipher } from "../crypto/cipher.js";
import { combineSinks } from "../domain/events.js";
import { SingleSignOn } from "../domain/sso/sign-in.js";
import { OidcRelyingParty } from "../http/sso/oidc.js";
import type { OidcSettings } from "../http/sso/oidc.js";
import { Requests } from "../domain/requests/requests.js";
import { Receipts } from "../domain/receipts/receipts.js";
import { DEFAULT_IDEMPOTENCY_WINDOW_SECONDS, IdempotencyKeys } from "../domain/idempotency/keys.js";
import type { EventSink } from "../domain/events.js";
import type { ChainState } from "../http/pages/console/overview.js";
import { VaultMetrics } from "../runtime/metrics.js";
import { createWebhooks } from "../webhooks/index.js";
import type { WebhookSettings, Webhooks } from "../webhooks/index.js";
import { SecretLifecycle } from "../domain/secrets/lifecycle.js";
import { createOrgDomain } from "../domain/orgs/org-domain.js";
import type { OrgDomain } from "../domain/orgs/org-domain.js";
import type { UnitOfWork, Work } from "../store/work.js";
import type { AuditCheck, Engine, EngineHooks } from "../store/engine.js";
import { AuditLog } from "../domain/audit/log.js";
import { ScopedKeys } from "../domain/keys.js";
import { metricsTokenResolver, principalKeyResolver, scopedKeyResolver } from "../http/token-resolvers.js";
import type { Logger } from "../log/log.js";
import { version } from "../version.js";
import { ApiError } from "../http/errors.js";
import { authFailedRecord } from "../http/access-guard.js";
import { DEFAULT_AUTH_FAIL_WINDOW_MS } from "../config.js";
import { AuthFailureCoalescer } from "../http/failed-auth.js";

/** What a vault is built from, beside its engine: everything injected, nothing global. */
export interface VaultOptions {
  cipher: ValueCipher;
  log: Logger;
  masterKey: string;
  /** Current time, Unix milliseconds. */
  now: () => number;
  /** Active-secret limit, or null when a valid license lifts it. */
  activeLimit: () => number | null;
  /** Base of public secrets' `url`; a function when it is known only once listening (port 0). */
  publicUrl: string | (() => string);
  maxValueBytes: number;
  /** Largest file of an end-to-end dead drop, bytes (VAULT_MAX_FILE_BYTES); default 10 MiB. */
  maxFileBytes?: number | undefined;
  /** Seconds a first answer to an Idempotency-Key is kept (VAULT_IDEMPOTENCY_WINDOW, default 600). */
  idempotencyWindowSeconds?: number | undefined;
  /** The share pages' settings (VAULT_SHARE_*); default: pages on, anonymous creation off. */
  share?: ShareSettings | undefined;
  trustProxy: boolean;
  /** Webhook settings (VAULT_WEBHOOK_*); every field defaults (a random signing secret). */
  webhooks?: WebhookSettings | undefined;
  /** Failed authentications per ip per window before 429 (VAULT_AUTH_FAIL_LIMIT, default 20; 0 turns the guard off). */
  authFailLimit?: number | undefined;
  /** The brute-force window, milliseconds (VAULT_AUTH_FAIL_WINDOW_MS, default 60000). */
  authFailWindowMs?: number | undefined;
  /** Why HTTPS waits for its ACME certificate, for /health; undefined: it does not (no ACME, or it has one). */
  tlsWaiting?: (() => string | undefined) | undefined;
  /** VAULT_METRICS_TOKEN: a bearer token that may read GET /metrics and nothing else. */
  metricsToken?: string | undefined;
  /** A valid license's holder and expiry (Unix seconds), for the console's overview; undefined: the free tier. */
  license?: { holder: string; expiresAt: number | null } | undefined;
  /** Also export the process's own metrics (CPU, memory, event loop, GC); the server turns it on. */
  processMetrics?: boolean | undefined;
  /** Single sign-on with OpenID Connect (VAULT_OIDC_*, docs/sso.md); undefined: off. */
  oidc?: OidcSettings | undefined;
  /** VAULT_CONSOLE_TOKEN_SIGNIN: false refuses principal keys at the console's token sign-in (default true). */
  consoleTokenSignin?: boolean | undefined;
}

/**
 * A built vault: the HTTP app and the parts background work and tests use,
 * over its engine `E` (SqliteEngine or PgEngine; `tx` is the engine's unit of work).
 */
export interface Vault<E extends Engine = Engine> {
  app: Hono<AppEnv>;
  /** The storage engine (store/engine.ts); server.ts closes it at a stop. */
  engine: E;
  tx: E["tx"];
  secrets: SecretLifecycle;
  /** Idempotency keys (docs/api.md, "Retries"); the sweeper deletes the answers past the window. */
  idempotency: IdempotencyKeys;
  /** Receipts of public secrets (docs/share.md, "Receipts"); the sweeper deletes those kept past their time. */
  receipts: Receipts;
  /** Requests: asking someone for a secret (docs/requests.md); the sweeper expires them. */
  requests: Requests;
  /** Orgs, roles, principals and principal keys (docs/orgs.md). */
  orgs: OrgDomain;
  /** Webhook registry, outbox and delivery worker (docs/webhooks.md); server.ts starts the worker. */
  webhooks: Webhooks;
  /** The append-only audit log, global and org (docs/audit.md). */
  audit: AuditLog;
  /** Prometheus metrics served at GET /metrics. */
  metrics: VaultMetrics;
  /** Scoped API keys. */
  scopedKeys: ScopedKeys;
  /**
   * Writes the summary rows of coalesced failed authentications whose window
   * has closed (every window with `all`, at a stop). server.ts calls it once
   * per window and before closing.
   * @returns how many summary rows were written.
   */
  flushAuthFailures: (all?: boolean) => Promise<number>;
}

/** The events that destroy a stored value (docs/operations.md): the engine may scrub them (SQLite's WAL). */
const DESTROYING: ReadonlySet<string> = new Set(["secret.burned", "secret.deleted", "secret.expired"]);

/**
 * Builds a vault over an open, migrated engine (store/engine.ts: a
 * SqliteEngine from store/sqlite/engine.ts, or a PgEngine from
 * store/pg/engine.ts): opens the audit chain with the current root key,
 * wires the engine's hooks (commit metrics, the subscriber cache's
 * rollback, the WAL scrub, the database-file watch), then assembles the
 * domain and the Hono app, the same for both engines. Used by server.ts,
 * embedders and the tests (SQLite on `:memory:`, with a fake clock).
 * The root keys are checked before (engine.verifyRootKeys).
 */
export function createVault<E extends Engine>(engine: E, options: VaultOptions): Vault<E> {
  const hooks = engine.hooks;
  const chainKeys = options.cipher.auditChainKeys();
  const logUnopened = (ok: boolean): void => {
    if (ok) return;
    options.log.error(
      "the audit chain's segment record or head could not be authenticated (altered, or its key is not loaded): `ephemeral-vault audit verify` reports where",
    );
  };
  const opened = engine.openAuditChain(options.cipher.currentKeyId, chainKeys);
  if (typeof opened === "boolean") logUnopened(opened);
  else void opened.then(logUnopened);
  const file = hooks.file;
  if (file !== undefined) {
    // Never acknowledge a write into a file that is no longer at its path.
    hooks.onBeforeCommit?.(() => {
      if (!file.present()) {
        throw new ApiError(503, "the database file was deleted or replaced; restart the vault", {
          message: `${file.path} is not the file this process opened`,
        });
      }
    });
  }
  const destroyed = hooks.valueDestroyed;
  const sinks: EventSink[] =
    destroyed === undefined
      ? []
      : [
          {
            secretEvent: (_w, event) => {
              if (DESTROYING.has(event.type)) destroyed();
            },
            secretsPruned: () => {},
            requestEvent: () => {},
          },
        ];
  // One check at a time: views arriving while one runs share its answer (docs/console.md, "Audit").
  let checking: Promise<AuditCheck> | undefined;
  const verifyAudit = (): Promise<AuditCheck> =>
    (checking ??= engine.verifyAudit(chainKeys).finally(() => {
      checking = undefined;
    }));
  const console = { engine: engine.label, verifyAudit };
  const parts = assemble(engine.tx, options, { sinks, cacheSubscribers: hooks.singleWriter, console, file });
  hooks.onCommitted?.((size, ms) => parts.metrics.observeCommit(size, ms));
  // A rolled-back create or delete must not leave the outbox's subscriber cache stale.
  hooks.onRollback?.(() => parts.webhooks.outbox.invalidate());
  return { ...parts, engine, tx: engine.tx };
}

/** The engine-neutral parts of a vault, built over a unit of work. */
function assemble(
  tx: UnitOfWork<Work>,
  options: VaultOptions,
  engine: {
    sinks: EventSink[];
    cacheSubscribers: boolean;
    console: { engine: string; verifyAudit?: (() => Promise<ChainState>) | undefined };
    file: EngineHooks["file"];
  },
): Omit<Vault, "tx" | "engine"> {
  const audit = new AuditLog({ now: options.now });
  // The gauges read the lifecycle and the queue at scrape time: both are made below.
  const sources = { secrets: undefined as SecretLifecycle | undefined, webhooks: undefined as Webhooks | undefined };
  const metrics = new VaultMetrics(
    {
      activeSecrets: () => tx.run((w) => sources.secrets?.countActive(w) ?? 0),
      outboxPending: () => tx.run((w) => sources.webhooks?.queue.pendingCount(w) ?? 0),
    },
    { processMetrics: options.processMetrics },
  );
  const webhooks = createWebhooks({
    tx,
    log: options.log,
    now: options.now,
    version,
    settings: options.webhooks,
    audit,
    onDeliveryOutcome: (outcome) => metrics.observeDelivery(outcome),
    cacheSubscribers: engine.cacheSubscribers,
  });
  const receipts = new Receipts({ now: options.now, cipher: options.cipher });
  const events = combineSinks(audit, webhooks.outbox, receipts, ...engine.sinks, metrics.sink);
  const secrets = new SecretLifecycle({
    cipher: options.cipher,
    events,
    now: options.now,
    activeLimit: options.activeLimit,
  });
  const requests = new Requests({ secrets, events, audit, now: options.now });
  const idempotency = new IdempotencyKeys({
    cipher: options.cipher,
    now: options.now,
    windowSeconds: options.idempotencyWindowSeconds ?? DEFAULT_IDEMPOTENCY_WINDOW_SECONDS,
  });
  sources.secrets = secrets;
  sources.webhooks = webhooks;
  const orgs = createOrgDomain({ now: options.now, secrets, audit });
  const scopedKeys = new ScopedKeys({ now: options.now, audit });
  const authFailures = new AuthFailureCoalescer({
    windowMs: options.authFailWindowMs ?? DEFAULT_AUTH_FAIL_WINDOW_MS,
    now: options.now,
  });
  const flushAuthFailures = async (all = false): Promise<number> => {
    const summaries = authFailures.drain(all);
    if (summaries.length === 0) return 0;
    await tx.run(async (w) => {
      for (const s of summaries) await audit.record(w, authFailedRecord(s.ip, s.count));
    });
    return summaries.length;
  };
  const app = createApp({
    tx,
    secrets,
    requests,
    receipts,
    idempotency,
    log: options.log,
    masterKey: options.masterKey,
    resolvers: [
      ...(options.metricsToken === undefined ? [] : [metricsTokenResolver(options.metricsToken)]),
      scopedKeyResolver(scopedKeys, tx, options.log),
      principalKeyResolver(orgs.principalKeys, tx),
    ],
    orgs,
    webhooks: { registry: webhooks.registry, allowPrivate: webhooks.allowPrivate, lookup: webhooks.lookup },
    publicUrl: options.publicUrl,
    maxValueBytes: options.maxValueBytes,
    maxFileBytes: options.maxFileBytes,
    share: options.share,
    trustProxy: options.trustProxy,
    version,
    audit,
    scopedKeys,
    now: options.now,
    authFailLimit: options.authFailLimit,
    authFailWindowMs: options.authFailWindowMs,
    authFailures,
    dbFile: engine.file,
    tlsWaiting: options.tlsWaiting,
    metrics,
    console: { ...engine.console, license: () => options.license },
    sso:
      options.oidc === undefined
        ? undefined
        : {
            rp: new OidcRelyingParty(options.oidc, options.now, typeof options.publicUrl === "function" ? options.publicUrl : () => options.publicUrl as string),
            signIn: new SingleSignOn({ now: options.now, principals: orgs.principals, principalKeys: orgs.principalKeys, audit }),
          },
    consoleTokenSignin: options.consoleTokenSignin,
  });
  return { app, secrets, requests, receipts, idempotency, orgs, webhooks, audit, scopedKeys, metrics, flushAuthFailures };
}

export { version };
