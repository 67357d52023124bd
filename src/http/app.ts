import { Hono } from "hono";
import type { AppEnv } from "./context.js";
import { errorResponse } from "./errors.js";
import type { UnitOfWork, Work } from "../store/work.js";
import type { Logger } from "../log/log.js";
import { front } from "./front.js";
import type { VaultMetrics } from "../runtime/metrics.js";
import { metricsRoute } from "./routes/metrics.js";
import type { TokenResolver } from "./auth.js";
import type { SecretLifecycle } from "../domain/secrets/lifecycle.js";
import { withRevealCheck } from "../domain/secrets/reveal.js";
import type { Requests } from "../domain/requests/requests.js";
import type { Receipts } from "../domain/receipts/receipts.js";
import type { IdempotencyKeys } from "../domain/idempotency/keys.js";
import { requestRoutes } from "./routes/requests.js";
import { isReceiptPath, receiptRoutes } from "./routes/receipts.js";
import { isSsoPath, ssoRoutes } from "./routes/sso.js";
import { isRequestPagePath, requestPageRoutes } from "./pages/request-routes.js";
import { mountRequestPages } from "./pages/request-views.js";
import { buildOpenApi } from "./openapi.js";
import { secretRoutes } from "./routes/secrets/index.js";
import { healthRoutes } from "./routes/health.js";
import type { DbFileCheck } from "../store/engine.js";
import type { OrgDomain } from "../domain/orgs/org-domain.js";
import { orgRoutes } from "./routes/orgs/index.js";
import { webhookRoutes } from "./routes/webhooks.js";
import type { WebhookRouteDeps } from "./routes/webhooks.js";
import { DEFAULT_AUTH_FAIL_LIMIT, DEFAULT_AUTH_FAIL_WINDOW_MS, DEFAULT_MAX_FILE_BYTES, DEFAULT_SHARE_ANONYMOUS_PER_MINUTE } from "../config.js";
import { isSharePagePath, mountAssets, mountSharePages } from "./pages/routes.js";
import { isConsolePath, mountConsole } from "./pages/console/routes.js";
import type { ConsoleInfo } from "./pages/console/overview.js";
import type { OidcRelyingParty } from "./sso/oidc.js";
import type { SingleSignOn } from "../domain/sso/sign-in.js";
import type { ShareSettings } from "./pages/routes.js";
import { FailedAuthLimiter } from "./failed-auth.js";
import { ShareMissGuard } from "./pages/share-guard.js";
import { FREE_TIER_LIMIT } from "../crypto/license.js";
import type { AuthFailureCoalescer } from "./failed-auth.js";
import type { AuditLog } from "../domain/audit/log.js";
import type { ScopedKeys } from "../domain/keys.js";
import { keyRoutes } from "./routes/keys.js";
import { auditRoutes } from "./routes/audit.js";
import { mount, route } from "./routes/declare.js";
import type { Route } from "./routes/declare.js";

/** Everything the HTTP layer needs, built by assembly/vault.ts: no module-level state. */
export interface AppDeps {
  tx: UnitOfWork<Work>;
  secrets: SecretLifecycle;
  /** Requests (docs/requests.md): /requests and the token-less /r/ routes. */
  requests: Requests;
  /** Receipts of public secrets (docs/share.md, "Receipts"): /receipts/<token>. */
  receipts: Receipts;
  /** Idempotency keys (docs/api.md, "Retries"): a retried change gets its first answer. */
  idempotency: IdempotencyKeys;
  log: Logger;
  masterKey: string;
  /** Token lookups besides the master key (scoped keys, principal keys). */
  resolvers: TokenResolver[];
  /** Orgs, roles, principals and principal keys (docs/orgs.md). */
  orgs: OrgDomain;
  /** Webhook registry and URL guard settings (docs/webhooks.md); without it no /webhooks routes. */
  webhooks?: Omit<WebhookRouteDeps, "tx"> | undefined;
  /** Base of public secrets' `url`; a function when it is known only once listening (port 0). */
  publicUrl: string | (() => string);
  maxValueBytes: number;
  /** Largest file of an end-to-end dead drop, bytes (VAULT_MAX_FILE_BYTES); default DEFAULT_MAX_FILE_BYTES. */
  maxFileBytes?: number | undefined;
  trustProxy: boolean;
  version: string;
  /** The audit log (docs/audit.md): access rows, GET /audit. */
  audit: AuditLog;
  /** Scoped API keys (docs/keys.md): /keys. */
  scopedKeys: ScopedKeys;
  /** Current time, Unix milliseconds (the brute-force guard's window). */
  now: () => number;
  /** The database file's identity, for /health; undefined for `:memory:`. */
  dbFile?: DbFileCheck | undefined;
  /** Why HTTPS waits for its ACME certificate, for /health (routes/health.ts); undefined: it does not. */
  tlsWaiting?: (() => string | undefined) | undefined;
  /** Prometheus metrics: every request is counted; GET /metrics serves them. */
  metrics: VaultMetrics;
  /** Failed authentications per ip per window before 429 (VAULT_AUTH_FAIL_LIMIT, default 20; 0 turns the guard off). */
  authFailLimit?: number | undefined;
  /** The window, milliseconds (VAULT_AUTH_FAIL_WINDOW_MS, default 60000). */
  authFailWindowMs?: number | undefined;
  /** Coalesces repeated auth.failed rows (built by assembly/vault.ts, which drains it). */
  authFailures: AuthFailureCoalescer;
  /** The share pages (`/`, `/s/<id>`): VAULT_SHARE_PAGE, VAULT_SHARE_ANONYMOUS; default on, anonymous off. */
  share?: ShareSettings | undefined;
  /** What the console's overview and audit pages show besides the API's answers (engine, license, the audit chain's check). */
  console?: Pick<ConsoleInfo, "engine" | "license" | "verifyAudit"> | undefined;
  /** Single sign-on (docs/sso.md): the relying party and the sign-in decision; undefined: VAULT_OIDC_ISSUER unset. */
  sso?: { rp: OidcRelyingParty; signIn: SingleSignOn } | undefined;
  /** VAULT_CONSOLE_TOKEN_SIGNIN (default true). */
  consoleTokenSignin?: boolean | undefined;
}

/**
 * Builds the Hono app: request id, security headers, authentication (401
 * before anything else), the resource routes (each authorizes, 403, before
 * reading its body: the 1 MiB limit, 413, is enforced there), and the one
 * error handler and 404 (both JSON, docs/contract.md §13).
 */
export function createApp(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  let openapi = "";
  const open: Route[] = [
    ...healthRoutes({ tx: deps.tx, now: deps.now, dbFile: deps.dbFile, tlsWaiting: deps.tlsWaiting }),
    metricsRoute({ metrics: deps.metrics }),
    route({
      method: "get",
      path: "/openapi.json",
      summary: "This OpenAPI 3.1 document. No token.",
      permission: "none",
      // No schema: the document itself, a JSON object of its own shape.
      responses: { 200: { description: "the document" } },
      handler: (c) => c.body(openapi, 200, { "Content-Type": "application/json" }),
    }),
  ];
  const orgs = orgRoutes(Object.assign({ tx: deps.tx }, deps.orgs));
  const audit = auditRoutes({ audit: deps.audit, tx: deps.tx });
  const keys = keyRoutes({ scopedKeys: deps.scopedKeys, tx: deps.tx });
  const webhooks = deps.webhooks ? webhookRoutes(Object.assign({ tx: deps.tx }, deps.webhooks)) : [];
  const share: ShareSettings = deps.share ?? { page: true, anonymous: false, anonymousPerMinute: DEFAULT_SHARE_ANONYMOUS_PER_MINUTE };
  const publicUrl = typeof deps.publicUrl === "function" ? deps.publicUrl : () => deps.publicUrl as string;
  const secretDeps = {
    secrets: deps.secrets,
    receipts: deps.receipts,
    idempotency: deps.idempotency,
    principalKeys: deps.orgs.principalKeys,
    tx: deps.tx,
    publicUrl: deps.publicUrl,
    // A public secret's link opens the recipient page; without the pages, the API read.
    publicPath: share.page ? "/s/" : "/secrets/",
    maxValueBytes: deps.maxValueBytes,
    maxFileBytes: deps.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES,
  };
  // One set of secret routes, built for the global key space and for every org's.
  const secrets = secretRoutes(secretDeps);
  // Every route, declared once: the app mounts this list and the document describes it.
  const pageDeps = {
    tx: deps.tx,
    secrets: deps.secrets,
    requests: deps.requests,
    receipts: deps.receipts,
    idempotency: deps.idempotency,
    audit: deps.audit,
    settings: share,
    trustProxy: deps.trustProxy,
    // Share misses need no credential: their own limiter, which refuses only under /s/ and /r/ (docs/share.md).
    shareGuard: new ShareMissGuard({
      limit: deps.authFailLimit ?? DEFAULT_AUTH_FAIL_LIMIT,
      windowMs: deps.authFailWindowMs ?? DEFAULT_AUTH_FAIL_WINDOW_MS,
      now: deps.now,
    }),
    maxValueBytes: deps.maxValueBytes,
    maxFileBytes: deps.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES,
    now: deps.now,
    publicUrl,
  };
  const requests = [...requestRoutes({ requests: deps.requests, tx: deps.tx, publicUrl }), ...requestPageRoutes(pageDeps)];
  const receipts = receiptRoutes({ tx: deps.tx, receipts: deps.receipts, secrets: deps.secrets, shareGuard: pageDeps.shareGuard, trustProxy: deps.trustProxy });
  const sso = ssoRoutes({ tx: deps.tx, sso: deps.sso, now: deps.now, trustProxy: deps.trustProxy });
  const routes: Route[] = [...open, ...secrets, ...receipts, ...requests, ...webhooks, ...keys, ...audit, ...orgs, ...sso];
  openapi = JSON.stringify(buildOpenApi(deps.version, routes));

  // One middleware in front of every route: request id and headers, 429,
  // authentication (401 before anything else), and after the handler the
  // access record (auth.failed, auth.denied, scoped-key rows).
  const limiter = new FailedAuthLimiter({
    limit: deps.authFailLimit ?? DEFAULT_AUTH_FAIL_LIMIT,
    windowMs: deps.authFailWindowMs ?? DEFAULT_AUTH_FAIL_WINDOW_MS,
    now: deps.now,
    onSharedAddress: (address) =>
      deps.log.warn(
        { address },
        "an address that presented valid tokens is now blocked for failed authentications: if the vault is behind a proxy, set VAULT_TRUST_PROXY so each client is told apart",
      ),
  });
  app.use(
    front({
      masterKey: deps.masterKey,
      resolvers: deps.resolvers,
      trustProxy: deps.trustProxy,
      metrics: deps.metrics,
      audit: deps.audit,
      tx: deps.tx,
      log: deps.log,
      authFailures: deps.authFailures,
      limiter,
      // The share pages need no token: the 256-bit id is the capability (docs/share.md).
      // The console authenticates by its session cookie, then calls the API with the session's token (docs/console.md).
      isOpenPath: (path) => path.startsWith("/assets/") || isConsolePath(path) || isReceiptPath(path) || isSsoPath(path) || (share.page && (isSharePagePath(path) || isRequestPagePath(path))),
    }),
  );
  mountAssets(app);
  mountSharePages(app, pageDeps);
  // The answer page and the private link's page (GETs under /r/); their POSTs are requestPageRoutes'.
  mountRequestPages(app, pageDeps);
  mountConsole(app, {
    trustProxy: deps.trustProxy,
    now: deps.now,
    publicUrl,
    info: {
      version: deps.version,
      engine: deps.console?.engine ?? "SQLite file",
      license: deps.console?.license ?? (() => undefined),
      freeTierLimit: FREE_TIER_LIMIT,
      freeTierUse: () => deps.tx.run((w) => deps.secrets.countActive(w)),
      endToEnd: (ids) => (ids.length === 0 ? Promise.resolve(new Set<string>()) : deps.tx.run((w) => withRevealCheck(w, ids))),
      now: deps.now,
      verifyAudit: deps.console?.verifyAudit,
    },
    sso: deps.sso === undefined ? undefined : { ...deps.sso, tx: deps.tx },
    tokenSignin: deps.consoleTokenSignin,
  });
  // The 1 MiB body limit (413) applies where a handler reads its body
  // (routes/declare.ts readJsonObject), after the route's authorization:
  // 401, then 403, then 413 (docs/contract.md §8). A GET never touches its
  // body, so the node adapter never builds a full Request for it.

  mount(app, routes);

  app.notFound((c) => c.json({ error: "not found" }, 404));
  app.onError((err, c) => errorResponse(err, c, deps.log));
  return app;
}
