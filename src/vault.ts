import type { Hono } from "hono";
import { createApp } from "./http/app.js";
import type { ShareSettings } from "./pages/routes.js";
import type { AppEnv } from "./http/context.js";
import type { ValueCipher } from "./crypto/cipher.js";
import type { Db } from "./store/sqlite/db.js";
import { combineSinks } from "./domain/events.js";
import type { EventSink } from "./domain/events.js";
import { WalScrubber } from "./store/sqlite/wal-scrub.js";
import { openChain } from "./domain/audit-chain.js";
import { verifyAuditChain } from "./domain/audit-verify.js";
import type { ChainState } from "./pages/console/overview.js";
import type { Pool } from "pg";
import { VaultMetrics } from "./ops/metrics.js";
import { createWebhooks } from "./webhooks/index.js";
import type { WebhookSettings, Webhooks } from "./webhooks/index.js";
import { SecretLifecycle } from "./domain/secrets.js";
import { createOrgDomain } from "./domain/org-domain.js";
import type { OrgDomain } from "./domain/org-domain.js";
import { GroupCommit } from "./store/sqlite/group-commit.js";
import { createSqliteWork } from "./store/sqlite/index.js";
import type { UnitOfWork, Work } from "./store/work.js";
import { AuditLog } from "./domain/audit.js";
import { ScopedKeys } from "./domain/keys.js";
import { metricsTokenResolver, principalKeyResolver, scopedKeyResolver } from "./http/token-resolvers.js";
import type { Logger } from "./ops/log.js";
import { version } from "./version.js";
import type { DbFileWatch } from "./store/sqlite/db-file-watch.js";
import { ApiError } from "./http/errors.js";
import { authFailedRecord } from "./http/access-guard.js";
import { DEFAULT_AUTH_FAIL_WINDOW_MS } from "./config.js";
import { AuthFailureCoalescer } from "./http/failed-auth.js";

/** What a vault is built from: everything injected, nothing global. */
export interface VaultOptions {
  db: Db;
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
  /** The share pages' settings (VAULT_SHARE_*); default: pages on, anonymous creation off. */
  share?: ShareSettings | undefined;
  trustProxy: boolean;
  /** Webhook settings (VAULT_WEBHOOK_*); every field defaults (a random signing secret). */
  webhooks?: WebhookSettings | undefined;
  /** Failed authentications per ip per window before 429 (VAULT_AUTH_FAIL_LIMIT, default 20; 0 turns the guard off). */
  authFailLimit?: number | undefined;
  /** The brute-force window, milliseconds (VAULT_AUTH_FAIL_WINDOW_MS, default 60000). */
  authFailWindowMs?: number | undefined;
  /**
   * The database file's identity (server.ts; none for `:memory:`): while it
   * is deleted or replaced, every commit is refused with 503 and /health
   * answers 503.
   */
  dbFile?: DbFileWatch | undefined;
  /** VAULT_METRICS_TOKEN: a bearer token that may read GET /metrics and nothing else. */
  metricsToken?: string | undefined;
  /** A valid license's holder and expiry (Unix seconds), for the console's overview; undefined: the free tier. */
  license?: { holder: string; expiresAt: number | null } | undefined;
  /** Also export the process's own metrics (CPU, memory, event loop, GC); the server turns it on. */
  processMetrics?: boolean | undefined;
}

/** A built vault: the HTTP app and the parts background work and tests use. */
export interface Vault {
  app: Hono<AppEnv>;
  tx: GroupCommit<Work>;
  secrets: SecretLifecycle;
  /** Orgs, roles, principals and principal keys (docs/orgs.md). */
  orgs: OrgDomain;
  /** Webhook registry, outbox and delivery worker (docs/webhooks.md); server.ts starts the worker. */
  webhooks: Webhooks;
  /** The append-only audit log, global and org (docs/audit.md). */
  audit: AuditLog;
  /** Truncates the WAL after a value is destroyed; server.ts stops it before closing the database. */
  walScrubber: WalScrubber;
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

/**
 * Builds a vault over an open, migrated SQLite database: the group commit
 * (SQLite's unit of work) with its engine hooks (the audit chain's batch
 * buffer, the database-file watch, the WAL scrub, commit metrics, the
 * subscriber cache's rollback), the domain and the Hono app. Used by
 * server.ts and by the tests (on `:memory:`, with a fake clock).
 */
export function createVault(options: VaultOptions): Vault {
  // The audit chain is keyed with the current root key's chain key (never stored).
  const chainKeys = options.cipher.auditChainKeys();
  const work = createSqliteWork(options.db, { auditChainKey: chainKeys.get(options.cipher.currentKeyId) ?? null });
  const tx = new GroupCommit<Work>(options.db, work);
  work.audit.attach(tx);
  const dbFile = options.dbFile;
  if (dbFile !== undefined) {
    // Never acknowledge a write into a file that is no longer at its path.
    tx.onBeforeCommit(() => {
      if (!dbFile.present()) {
        throw new ApiError(503, "the database file was deleted or replaced; restart the vault", {
          message: `${dbFile.path} is not the file this process opened`,
        });
      }
    });
  }
  if (!openChain(options.db, options.cipher.currentKeyId, chainKeys)) {
    options.log.error(
      "the audit chain's segment record or head could not be authenticated (altered, or its key is not loaded): `ephemeral-vault audit verify` reports where",
    );
  }
  const walScrubber = new WalScrubber({ db: options.db, tx, log: options.log });
  const db = options.db;
  const parts = assemble(tx, options, {
    sinks: [walScrubber],
    cacheSubscribers: true,
    console: {
      engine: "SQLite file",
      verifyAudit: async () => {
        const report = verifyAuditChain(db, chainKeys);
        return report.ok ? { ok: true, rows: report.rows } : { ok: false, rows: report.rows, at: String(report.brokenId), reason: report.reason };
      },
    },
  });
  tx.onCommitted((size, ms) => parts.metrics.observeCommit(size, ms));
  // A rolled-back create or delete must not leave the outbox's subscriber cache stale.
  parts.webhooks.outbox.attach(tx);
  return { ...parts, tx, walScrubber };
}

/** What a PostgreSQL node is built from: the common options, without the SQLite database. */
export type PgVaultOptions = Omit<VaultOptions, "db" | "dbFile">;

/** A vault node on PostgreSQL: the same app and domain over the PostgreSQL engine's unit of work. */
export type PgVault = Omit<Vault, "tx" | "walScrubber"> & { tx: UnitOfWork<Work> };

/**
 * Builds a vault node over the PostgreSQL engine (store/pg/engine.ts): the
 * same domain and app as createVault, over a unit of work per request on a
 * pooled client. Nothing is cached between requests that another node
 * could change (webhook subscribers are read per event).
 */
export function createPgVault(engine: { tx: UnitOfWork<Work>; pool?: Pool | undefined }, options: PgVaultOptions): PgVault {
  const pool = engine.pool;
  const verifyAudit =
    pool === undefined
      ? undefined
      : async (): Promise<ChainState> => {
          const { verifyPgAuditChains } = await import("./store/pg/audit-verify.js");
          const report = await verifyPgAuditChains(pool, options.cipher.auditChainKeys());
          return report.ok ? { ok: true, rows: report.rows } : { ok: false, rows: report.rows, at: `${report.chain}#${report.seq}`, reason: report.reason };
        };
  const console = { engine: "PostgreSQL", verifyAudit };
  return { ...assemble(engine.tx, options, { sinks: [], cacheSubscribers: false, console }), tx: engine.tx };
}

/** The engine-neutral parts of a vault, built over a unit of work. */
function assemble(
  tx: UnitOfWork<Work>,
  options: PgVaultOptions & { dbFile?: DbFileWatch | undefined },
  engine: { sinks: EventSink[]; cacheSubscribers: boolean; console: { engine: string; verifyAudit?: (() => Promise<ChainState>) | undefined } },
): Omit<Vault, "tx" | "walScrubber"> {
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
  const secrets = new SecretLifecycle({
    cipher: options.cipher,
    events: combineSinks(audit, webhooks.outbox, ...engine.sinks, metrics.sink),
    now: options.now,
    activeLimit: options.activeLimit,
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
    share: options.share,
    trustProxy: options.trustProxy,
    version,
    audit,
    scopedKeys,
    now: options.now,
    authFailLimit: options.authFailLimit,
    authFailWindowMs: options.authFailWindowMs,
    authFailures,
    dbFile: options.dbFile,
    metrics,
    console: { ...engine.console, license: () => options.license },
  });
  return { app, secrets, orgs, webhooks, audit, scopedKeys, metrics, flushAuthFailures };
}

export { version };
