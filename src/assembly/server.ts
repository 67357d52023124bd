import type { VaultServer } from "../http/server.js";
import type { AddressInfo } from "node:net";
import { localAddressOf, writeAddressFile } from "../runtime/address-file.js";
import type { Config } from "../config.js";
import { ConfigError, defaultPublicUrl } from "../config.js";
import type { ValueCipher } from "../crypto/cipher.js";
import { createHttpServer } from "../http/server.js";
import { FileCertificateSource } from "../http/tls/file-source.js";
import type { ReloadOutcome } from "../http/tls/file-source.js";
import { CertificateError } from "../http/tls/source.js";
import { createRedirectServer } from "../http/tls/redirect.js";
import type { ChallengeAnswerer } from "../http/tls/redirect.js";
import { AcmeCertificateSource } from "../http/tls/acme-source.js";
import { databaseAcme } from "../http/tls/acme-shared.js";
import type { CertificateSource } from "../http/tls/source.js";
import type { Server as HttpServer } from "node:http";
import type { KeyMaterial, Notice } from "../runtime/keyfiles.js";
import { FREE_TIER_LIMIT, parseLicensePublicKey, verifyLicense } from "../crypto/license.js";
import type { Logger } from "../log/log.js";
import { SWEEP_BATCH, SWEEP_BATCH_AWAITED, startSweeper } from "../runtime/sweeper.js";
import { openPgNode, openSqliteNode } from "./node.js";
import type { VaultOptions } from "./vault.js";
import { readFileSync } from "node:fs";
import type { OidcSettings } from "../http/sso/oidc.js";

/** Time allowed for in-flight requests at a graceful stop before connections are cut, ms. */
const DRAIN_MS = 4000;

export interface RunningServer {
  /** The address it listens on, e.g. http://127.0.0.1:8484 (https:// with TLS). */
  url: string;
  port: number;
  /** The port of the plain-HTTP redirect listener (VAULT_HTTP_REDIRECT_PORT); undefined: none. */
  redirectPort: number | undefined;
  /**
   * Reads VAULT_TLS_CERT and VAULT_TLS_KEY again (the serve command calls it
   * on SIGHUP); undefined without TLS from files (none, or ACME). See FileCertificateSource.reload.
   */
  reloadTls: (() => ReloadOutcome) | undefined;
  /**
   * Graceful stop (docs/contract.md §15): stop accepting, let in-flight
   * requests finish (at most DRAIN_MS), flush the group commit, stop the
   * sweeper and the webhook worker, close the database.
   */
  stop: () => Promise<void>;
  /** The app in process, no socket (Hono's `app.fetch`): for embedding (embed.ts). */
  fetch: (request: Request) => Promise<Response>;
  /** The master key it runs with (a setting, the data dir's key file, or generated). */
  masterKey: string;
}

/** How the server is started, beyond its Config. */
export interface StartOptions {
  /**
   * Also export the process's own metrics (CPU, memory, GC; prom-client's
   * default metrics) on /metrics. Default true; embedded vaults (embed.ts)
   * turn it off: those describe the host program, not the vault.
   */
  processMetrics?: boolean | undefined;
  /**
   * Log the start's free-tier line at info instead of warn: an embedded
   * vault (embed.ts) is quiet at its default level, warn.
   */
  quietStart?: boolean | undefined;
}

/**
 * Starts the vault: license -> storage node (SQLite in the data dir, or
 * PostgreSQL with VAULT_DATABASE_URL) -> app -> listen, plus the TTL
 * sweeper and the webhook delivery worker.
 *
 * With VAULT_TLS_CERT and VAULT_TLS_KEY it listens with HTTPS (the pair
 * read and checked before anything else, then watched: http/tls/file-source.ts),
 * and with VAULT_HTTP_REDIRECT_PORT also with plain HTTP redirecting there
 * (http/tls/redirect.ts). With VAULT_ACME_DOMAINS the certificate comes by
 * ACME instead (http/tls/acme-source.ts): HTTPS listens at once, with the
 * stored certificate or a placeholder while /health says why, and the
 * redirect listener answers the HTTP-01 challenges.
 *
 * @param notice writes operator messages (generated keys) to stderr, once.
 * @param options see StartOptions.
 * @throws ConfigError for a bad data dir, a key file, a wrong encryption key,
 *   a database that cannot be opened, a TLS certificate or key that cannot be
 *   read or do not match, or a port or host it cannot listen on (the command
 *   exits 2); any other listen error as is.
 */
export async function startServer(config: Config, log: Logger, notice: Notice, options: StartOptions = {}): Promise<RunningServer> {
  const oidc = oidcSettingsOf(config);
  const acme = await openAcmeSource(config, log, notice);
  const fileTls = acme === undefined ? openCertificateSource(config, log) : undefined;
  const tls: CertificateSource | undefined = acme ?? fileTls;
  const licenseKey = config.licensePublicKey === undefined ? undefined : parseLicensePublicKey(config.licensePublicKey);
  const license = verifyLicense(config.licenseKey, licenseKey, Date.now());
  // The default public url names the port; with port 0 it is known only once listening.
  let publicUrl = config.publicUrl;
  // The node's cipher, kept for the ACME rows the nodes of a database share (http/tls/acme-shared.ts).
  let cipher: ValueCipher | undefined;
  const common = (keys: KeyMaterial, nodeCipher: ValueCipher): VaultOptions => {
    cipher = nodeCipher;
    return vaultOptions(keys, nodeCipher);
  };
  const vaultOptions = (keys: KeyMaterial, nodeCipher: ValueCipher): VaultOptions => ({
    cipher: nodeCipher,
    tlsWaiting: acme === undefined ? undefined : () => acme.waiting(),
    log,
    masterKey: keys.masterKey,
    now: Date.now,
    activeLimit: () =>
      license.valid && (license.expiresAt === null || license.expiresAt * 1000 > Date.now()) ? null : FREE_TIER_LIMIT,
    publicUrl: () => publicUrl,
    maxValueBytes: config.maxValueBytes,
    maxFileBytes: config.maxFileBytes,
    idempotencyWindowSeconds: config.idempotencyWindow,
    share: {
      page: config.sharePage,
      anonymous: config.shareAnonymous,
      anonymousPerMinute: config.shareAnonymousPerMinute,
      anonymousTotalPerMinute: config.shareAnonymousTotalPerMinute,
      anonymousCaps: {
        maxSecrets: config.shareAnonymousMaxSecrets,
        maxBytes: config.shareAnonymousMaxBytes,
        netMaxSecrets: config.shareAnonymousNetMaxSecrets,
        netMaxBytes: config.shareAnonymousNetMaxBytes,
      },
    },
    trustProxy: config.trustProxy,
    metricsToken: config.metricsToken,
    processMetrics: options.processMetrics ?? true,
    oidc,
    consoleTokenSignin: config.consoleTokenSignin,
    license: license.valid ? { holder: license.subject, expiresAt: license.expiresAt } : undefined,
    authFailLimit: config.authFailLimit,
    authFailWindowMs: config.authFailWindowMs,
    webhooks: {
      secret: keys.webhookSecret,
      allowPrivate: config.webhookAllowPrivate,
      orgGlobalSignature: config.webhookOrgGlobalSignature,
      timeoutMs: config.webhookTimeoutMs,
      maxAttempts: config.webhookMaxAttempts,
      retryBaseMs: config.webhookRetryBaseMs,
      perScope: config.webhooksPerScope,
      failingAfter: config.webhookFailingAfter,
      scopeConcurrency: config.webhookScopeConcurrency,
    },
  });
  const node = await (config.databaseUrl === undefined ? openSqliteNode(config, notice, common, log) : openPgNode(config, notice, common, log)).catch((err: unknown) => {
    tls?.close();
    throw err;
  });
  const masterKey = node.masterKey;
  if (license.valid) {
    log.info({ subject: license.subject, expires_at: license.expiresAt }, "license valid: no active-secret limit");
  } else {
    log[options.quietStart === true ? "info" : "warn"](`free tier: at most ${FREE_TIER_LIMIT} active secrets (${license.reason})`);
  }
  if (config.webhookAllowPrivate) {
    log.warn(
      "VAULT_WEBHOOK_ALLOW_PRIVATE is on: webhooks may target loopback, private and link-local addresses (this machine, its network, cloud metadata); for development and tests only (docs/configuration.md)",
    );
  }
  const vault = node.vault;
  const sweeper = startSweeper({
    secrets: vault.secrets,
    requests: vault.requests,
    receipts: vault.receipts,
    idempotency: vault.idempotency,
    valueDestroyed: vault.engine.hooks.valueDestroyed?.bind(vault.engine.hooks),
    tx: vault.tx,
    log,
    intervalMs: config.sweepIntervalMs,
    // SQLite's units run on the event loop, between requests; PostgreSQL's are awaited.
    batch: vault.engine.kind === "sqlite" ? SWEEP_BATCH : SWEEP_BATCH_AWAITED,
  });
  // Summary rows of coalesced failed authentications, once per window.
  const authFailureDrain = setInterval(() => {
    vault.flushAuthFailures().catch((err: unknown) => log.error({ err }, "coalesced auth.failed rows not written"));
  }, config.authFailWindowMs);
  authFailureDrain.unref();

  const server = await new Promise<VaultServer>((resolve, reject) => {
    const s = createHttpServer(vault.app.fetch, config, log, config.host, tls);
    s.once("listening", () => resolve(s));
    s.once("error", reject);
    s.listen(config.port, config.host);
  }).catch(async (err: unknown) => {
    clearInterval(authFailureDrain);
    tls?.close();
    await sweeper.stop();
    await node.close();
    throw listenError(err, config);
  });
  const port = (server.address() as AddressInfo).port;
  const shownHost = config.host.includes(":") ? `[${config.host}]` : config.host;
  const url = `${tls === undefined ? "http" : "https"}://${shownHost}:${port}`;
  const tlsOn = tls !== undefined;
  const acmeDomain = config.acmeDomains?.[0];
  if (config.port === 0 && config.publicUrl === defaultPublicUrl(config.host, 0, tlsOn, acmeDomain)) {
    publicUrl = acmeDomain === undefined ? url : defaultPublicUrl(config.host, port, true, acmeDomain);
  }
  let redirect: HttpServer | undefined;
  if (config.httpRedirectPort !== undefined) {
    redirect = await listenRedirect(config, publicUrl, port, acme?.challenge).catch(async (err: unknown) => {
      clearInterval(authFailureDrain);
      tls?.close();
      await new Promise((resolve) => server.close(resolve));
      await sweeper.stop();
      await node.close();
      throw err;
    });
  }
  const redirectPort = redirect === undefined ? undefined : (redirect.address() as AddressInfo).port;
  log.info({ url, storage: node.storage, redirect_port: redirectPort }, "ephemeral-vault listening");
  if (!isLoopbackHost(config.host) && config.publicUrl === defaultPublicUrl(config.host, config.port, tlsOn)) {
    log.warn(
      { publicUrl },
      "VAULT_PUBLIC_URL is not set: share links will name this bind address, which people outside this machine may not be able to open; set VAULT_PUBLIC_URL to the address they use (docs/share.md)",
    );
  }
  // The first order (or the stored certificate's renewal) once the challenge can be answered.
  // On PostgreSQL the nodes of the database share the certificate, one renewing at a time.
  acme?.start(
    (outcome) => {
      if (outcome !== "picked_up") vault.metrics.observeAcmeRenewal(outcome);
    },
    config.databaseUrl === undefined || cipher === undefined ? undefined : databaseAcme(vault.tx, cipher),
  );
  // Webhook deliveries run in the background; pending ones from before a restart go out now.
  vault.webhooks.worker.start();
  const removeAddressFile = recordAddress(config, port, log);

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      await new Promise<void>((resolve) => {
        const force = setTimeout(() => server.closeAllConnections(), DRAIN_MS);
        // A keep-alive connection whose request was in flight at close() becomes
        // idle only after its response; close those as they go idle, or the
        // stop would always wait the whole DRAIN_MS.
        const idle = setInterval(() => server.closeIdleConnections(), 50);
        server.close(() => {
          clearTimeout(force);
          clearInterval(idle);
          resolve();
        });
        server.closeIdleConnections();
        redirect?.close();
        redirect?.closeAllConnections();
      });
      tls?.close();
      clearInterval(authFailureDrain);
      await Promise.all([sweeper.stop(), vault.webhooks.worker.stop()]);
      await vault.flushAuthFailures(true).catch((err: unknown) => log.error({ err }, "coalesced auth.failed rows not written"));
      removeAddressFile();
      await node.close();
      log.info("ephemeral-vault stopped");
    })());

  const reloadTls = fileTls === undefined ? undefined : () => fileTls.reload("SIGHUP");
  return { url, port, redirectPort, reloadTls, stop, fetch: (request) => Promise.resolve(vault.app.fetch(request)), masterKey };
}

/**
 * The certificate source of VAULT_TLS_CERT / VAULT_TLS_KEY, read and checked
 * now; undefined without them.
 * @throws ConfigError with the file or the mismatch named (no key material).
 */
function openCertificateSource(config: Config, log: Logger): FileCertificateSource | undefined {
  if (config.tlsCert === undefined || config.tlsKey === undefined) return undefined;
  try {
    return new FileCertificateSource({ certPath: config.tlsCert, keyPath: config.tlsKey }, log);
  } catch (err) {
    if (err instanceof CertificateError) throw new ConfigError(err.message);
    throw err;
  }
}

/**
 * The certificate source of VAULT_ACME_DOMAINS (http/tls/acme-source.ts),
 * with the stored certificate or a placeholder, no order yet (start() once
 * the redirect listener answers challenges); undefined without ACME.
 * @throws ConfigError when the data dir's `acme/` files cannot be read.
 */
async function openAcmeSource(config: Config, log: Logger, notice: Notice): Promise<AcmeCertificateSource | undefined> {
  if (config.acmeDomains === undefined) return undefined;
  try {
    return await AcmeCertificateSource.open(
      { domains: config.acmeDomains, email: config.acmeEmail, directoryUrl: config.acmeDirectory, dataDir: config.dataDir, say: notice },
      log,
    );
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== undefined) throw new ConfigError(`the ACME files in ${config.dataDir}/acme cannot be read (${code})`);
    throw err;
  }
}

/**
 * Starts the redirect listener of VAULT_HTTP_REDIRECT_PORT on VAULT_HOST: to
 * the public URL's origin when it is https://, else to the request's host on
 * the HTTPS port; ACME HTTP-01 challenges go to `challenge`.
 * @throws ConfigError naming VAULT_HTTP_REDIRECT_PORT when it cannot listen there.
 */
async function listenRedirect(config: Config, publicUrl: string, tlsPort: number, challenge: ChallengeAnswerer | undefined): Promise<HttpServer> {
  const origin = publicUrl.startsWith("https://") && config.publicUrl !== defaultPublicUrl(config.host, config.port, true) ? new URL(publicUrl).origin : undefined;
  const redirect = createRedirectServer({ origin, tlsPort, limits: config, challenge });
  return new Promise<HttpServer>((resolve, reject) => {
    redirect.once("listening", () => resolve(redirect));
    redirect.once("error", (err: NodeJS.ErrnoException) => {
      reject(new ConfigError(`VAULT_HTTP_REDIRECT_PORT ${config.httpRedirectPort} cannot be used on ${config.host} (${err.code ?? err.message})`));
    });
    redirect.listen(config.httpRedirectPort, config.host);
  });
}

/**
 * Records where a SQLite vault listens in its data dir (`address`, mode 0600,
 * runtime/address-file.ts), so a client in the same directory finds it on any port
 * (docs/cli.md "Connecting"); only for a loopback-reachable bind. Nothing for
 * PostgreSQL or `:memory:`. A file that cannot be written is logged, not fatal.
 * @returns the function that removes the file at a clean stop.
 */
function recordAddress(config: Config, port: number, log: Logger): () => void {
  const addr = localAddressOf(config.host, port, config.tlsCert !== undefined || config.acmeDomains !== undefined);
  if (config.databaseUrl !== undefined || config.dataDir === ":memory:" || addr === undefined) return () => {};
  try {
    const remove = writeAddressFile(config.dataDir, addr);
    return () => {
      try {
        remove();
      } catch (err) {
        log.warn({ err }, "the address file could not be removed");
      }
    };
  } catch (err) {
    log.warn({ err }, "the address file could not be written: clients find this vault only through VAULT_ADDR");
    return () => {};
  }
}

/**
 * A listen failure caused by the settings (port taken or privileged, host
 * unknown or not local) becomes a ConfigError naming VAULT_PORT or
 * VAULT_HOST, so the command exits 2 like any bad setting (docs/contract.md
 * §15); anything else is returned unchanged.
 */
function listenError(err: unknown, config: Config): unknown {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === "EADDRINUSE" || code === "EACCES") {
    return new ConfigError(`VAULT_PORT ${config.port} cannot be used on ${config.host} (${code})`);
  }
  if (code === "EADDRNOTAVAIL" || code === "ENOTFOUND" || code === "EAI_AGAIN" || code === "EAI_FAIL") {
    return new ConfigError(`VAULT_HOST ${config.host} is not an address of this machine (${code})`);
  }
  return err;
}

/** True for a bind address only this machine reaches: 127.0.0.0/8, ::1 or localhost. */
function isLoopbackHost(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\./.test(host);
}

/**
 * The single sign-on settings of the config (docs/sso.md), the client secret
 * read from VAULT_OIDC_CLIENT_SECRET_FILE when that is given; undefined
 * without VAULT_OIDC_ISSUER.
 * @throws ConfigError when the secret file cannot be read or is empty.
 */
export function oidcSettingsOf(config: Config): OidcSettings | undefined {
  if (config.oidcIssuer === undefined || config.oidcClientId === undefined || config.oidcOrg === undefined) return undefined;
  let clientSecret = config.oidcClientSecret;
  if (config.oidcClientSecretFile !== undefined) {
    try {
      clientSecret = readFileSync(config.oidcClientSecretFile, "utf8").trim();
    } catch (err) {
      throw new ConfigError(`VAULT_OIDC_CLIENT_SECRET_FILE cannot be read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
    }
    if (clientSecret === "") throw new ConfigError("VAULT_OIDC_CLIENT_SECRET_FILE is empty");
  }
  return {
    issuer: config.oidcIssuer,
    clientId: config.oidcClientId,
    clientSecret,
    redirectUrl: config.oidcRedirectUrl,
    scopes: config.oidcScopes,
    roleClaim: config.oidcRoleClaim,
    orgId: config.oidcOrg,
    roleMap: config.oidcRoleMap,
    keyTtlSeconds: config.oidcKeyTtl,
  };
}
