import { isIP } from "node:net";
import * as v from "valibot";
import { LOG_LEVELS } from "./ops/log-levels.js";
import type { LogLevel } from "./ops/log-levels.js";
import { parseRootKey } from "./crypto/cipher.js";
import { parseLicensePublicKey } from "./crypto/license.js";

/** The validated configuration the server is built from (decisions.md section 1). */
export interface Config {
  /** TCP port; 0 picks a free one (tests). */
  port: number;
  host: string;
  /** Directory for vault.db and key files, or ":memory:" (nothing written to disk). */
  dataDir: string;
  /** Master bearer token; undefined means "load or generate in the data dir". */
  masterKey: string | undefined;
  /** 32-byte root key; undefined means "load or generate in the data dir". */
  encryptionKey: Buffer | undefined;
  /** Older 32-byte root keys, for records written before a rotation. */
  previousEncryptionKeys: Buffer[];
  /** Base of the `url` of public secrets, without a trailing slash. */
  publicUrl: string;
  licenseKey: string | undefined;
  licensePublicKey: string | undefined;
  webhookSecret: string | undefined;
  /** Bearer token that may read GET /metrics and nothing else; undefined: only the master key may. */
  metricsToken: string | undefined;
  webhookAllowPrivate: boolean;
  /** One delivery attempt's limit, milliseconds. */
  webhookTimeoutMs: number;
  webhookMaxAttempts: number;
  /** Backoff base, milliseconds. */
  webhookRetryBaseMs: number;
  /** Sweeper period, milliseconds; 0 turns the sweeper off. */
  sweepIntervalMs: number;
  /** Largest secret value, UTF-8 bytes. */
  maxValueBytes: number;
  trustProxy: boolean;
  logLevel: LogLevel;
  /** Failed authentications from one ip within the window before 429; 0 (the default) turns the guard off. */
  authFailLimit: number;
  /** The brute-force guard's window, milliseconds. */
  authFailWindowMs: number;
  /** Time a client has to send a request's complete headers, milliseconds (Node's server.headersTimeout). */
  headersTimeoutMs: number;
  /** Time a client has to send a whole request, headers and body, milliseconds (server.requestTimeout). */
  requestTimeoutMs: number;
  /** How long an idle keep-alive connection is kept open, milliseconds (server.keepAliveTimeout). */
  keepAliveTimeoutMs: number;
  /** Open client connections at most; further ones are closed at once (server.maxConnections). */
  maxConnections: number;
  /** Open connections of one client address at most (127.0.0.1 and ::1 not capped); 0: no cap. */
  maxConnectionsPerIp: number;
  /** Webhooks at most per scope (the global scope, or one org). */
  webhooksPerScope: number;
  /** Consecutive failed deliveries after which a webhook is marked failing and no longer retried. */
  webhookFailingAfter: number;
  /** Delivery slots (of the worker's 8) one scope, global or an org, may hold at once. */
  webhookScopeConcurrency: number;
  /** VAULT_DATABASE_URL: a postgres:// URL selects the PostgreSQL engine; undefined: SQLite in dataDir. */
  databaseUrl: string | undefined;
  /** Connections of the PostgreSQL pool at most (VAULT_DATABASE_POOL_SIZE). */
  databasePoolSize: number;
  /**
   * VAULT_DATABASE_PREPARED_STATEMENTS: run the hot-path statements as named
   * prepared statements (store/pg/prepared.ts; default true). False for a
   * pooler in transaction mode that does not track them (PgBouncer before
   * 1.21, or with max_prepared_statements = 0).
   */
  databasePreparedStatements: boolean;
  /**
   * VAULT_DATABASE_GROUP_COMMIT: the units of work of one event-loop turn
   * share one PostgreSQL transaction (store/pg/group-commit.ts; default false:
   * measured on two cores it won on a hot key, not on spread reads,
   * docs/performance.md "PostgreSQL").
   */
  databaseGroupCommit: boolean;
  /** VAULT_SHARE_PAGE: serve the share pages (`/`, `/s/<id>`); false: 404 there, for vaults used only by programs. */
  sharePage: boolean;
  /** VAULT_SHARE_ANONYMOUS: the create page may make public secrets without a token, within the caps of docs/share.md. */
  shareAnonymous: boolean;
  /** Anonymous creates per client address per minute (VAULT_SHARE_ANONYMOUS_PER_MINUTE). */
  shareAnonymousPerMinute: number;
}

/**
 * Default of VAULT_HEADERS_TIMEOUT_MS: 10 s for a client to send its headers.
 * A real client sends them in one packet; a slowloris client dribbling them
 * holds its connection at most this long.
 */
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
/** Default of VAULT_REQUEST_TIMEOUT_MS: 30 s for a whole request (a 1 MiB body on a slow link fits). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** Default of VAULT_KEEP_ALIVE_TIMEOUT_MS: an idle keep-alive connection is closed after 5 s (Node's default). */
export const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 5_000;
/**
 * Default of VAULT_MAX_CONNECTIONS: 512 client connections. The usual open
 * file limit is 1024 per process; the vault also needs descriptors for
 * vault.db, its -wal and -shm files, the listening socket, stdio, the event
 * loop and outgoing webhook connections. Half the limit keeps well clear of
 * EMFILE, which would fail database writes and new connections alike.
 */
export const DEFAULT_MAX_CONNECTIONS = 512;
/**
 * Default of VAULT_MAX_CONNECTIONS_PER_IP: 64 open connections per client
 * address (IPv6 by /64), so one client holding slow or idle connections
 * cannot take all of VAULT_MAX_CONNECTIONS (docs/deploy.md). 127.0.0.1 and
 * ::1 are not capped (http-server.ts).
 */
export const DEFAULT_MAX_CONNECTIONS_PER_IP = 64;
/** Default of VAULT_WEBHOOKS_PER_SCOPE: 25 webhooks for the global scope and for each org. */
export const DEFAULT_WEBHOOKS_PER_SCOPE = 25;
/** Default of VAULT_WEBHOOK_FAILING_AFTER: 5 consecutive failed deliveries mark a webhook failing. */
export const DEFAULT_WEBHOOK_FAILING_AFTER = 5;
/**
 * Default of VAULT_WEBHOOK_SCOPE_CONCURRENCY: one scope (the global one, or
 * an org) holds at most 4 of the delivery worker's 8 slots, so a tenant with
 * slow receivers leaves the others room (docs/webhooks.md).
 */
export const DEFAULT_WEBHOOK_SCOPE_CONCURRENCY = 4;

/**
 * Default of VAULT_AUTH_FAIL_LIMIT: failed authentications per
 * remote ip per window before 429. A direct loopback peer is never counted
 * (failed-auth.ts), so the contract's 401 stays 401 for local clients.
 */
export const DEFAULT_AUTH_FAIL_LIMIT = 20;
/** Default of VAULT_AUTH_FAIL_WINDOW_MS: the window, milliseconds. */
export const DEFAULT_AUTH_FAIL_WINDOW_MS = 60_000;

/** Default of VAULT_SHARE_ANONYMOUS_PER_MINUTE: 10 anonymous creates per client address per minute. */
export const DEFAULT_SHARE_ANONYMOUS_PER_MINUTE = 10;

/** A bad setting: the message names it. The command prints it and exits 2. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

type Kind = "string" | "boolean";
interface Setting {
  /** Environment variable names, the first one canonical. */
  env: string[];
  kind: Kind;
  help: string;
}

/**
 * Every setting, by its Config field. The flag is the first variable's name
 * without `VAULT_`, lower-cased, with dashes: VAULT_DATA_DIR -> --data-dir.
 */
export const SETTINGS: Record<Exclude<keyof Config, never>, Setting> = {
  port: { env: ["VAULT_PORT", "PORT"], kind: "string", help: "TCP port (default 8484)" },
  host: { env: ["VAULT_HOST"], kind: "string", help: "bind address (default 127.0.0.1; 0.0.0.0 to self-host)" },
  dataDir: { env: ["VAULT_DATA_DIR"], kind: "string", help: "data directory (default ./.vault; :memory: for nothing on disk)" },
  masterKey: { env: ["VAULT_MASTER_KEY", "VAULT_API_KEY"], kind: "string", help: "master bearer token, 16+ chars (default: generated into <data dir>/master.key)" },
  encryptionKey: { env: ["VAULT_ENCRYPTION_KEY"], kind: "string", help: "256-bit root key, 64 hex chars or base64 (default: generated into <data dir>/encryption.key)" },
  previousEncryptionKeys: { env: ["VAULT_PREVIOUS_ENCRYPTION_KEYS"], kind: "string", help: "comma-separated older root keys, to read records written before a rotation" },
  publicUrl: { env: ["VAULT_PUBLIC_URL"], kind: "string", help: "base of the url returned for public secrets (default http://{host}:{port})" },
  licenseKey: { env: ["VAULT_LICENSE_KEY"], kind: "string", help: "license token; without a valid one at most 100 active secrets" },
  licensePublicKey: { env: ["VAULT_LICENSE_PUBLIC_KEY"], kind: "string", help: "Ed25519 public key of the license issuer (base64 of 32 bytes, or PEM)" },
  webhookSecret: { env: ["VAULT_WEBHOOK_SECRET"], kind: "string", help: "HMAC key for webhook signatures (default: generated into <data dir>/webhook.secret)" },
  metricsToken: { env: ["VAULT_METRICS_TOKEN"], kind: "string", help: "bearer token for GET /metrics only, 16+ chars (default: none; the master key may always read /metrics)" },
  webhookAllowPrivate: { env: ["VAULT_WEBHOOK_ALLOW_PRIVATE"], kind: "boolean", help: "let webhooks target loopback and private addresses (development only)" },
  webhookTimeoutMs: { env: ["VAULT_WEBHOOK_TIMEOUT_MS"], kind: "string", help: "one delivery attempt's time limit, ms (default 10000)" },
  webhookMaxAttempts: { env: ["VAULT_WEBHOOK_MAX_ATTEMPTS"], kind: "string", help: "attempts per delivery, the first included (default 8)" },
  webhookRetryBaseMs: { env: ["VAULT_WEBHOOK_RETRY_BASE_MS"], kind: "string", help: "retry backoff base, ms (default 1000)" },
  sweepIntervalMs: { env: ["VAULT_SWEEP_INTERVAL_MS"], kind: "string", help: "TTL sweeper period, ms; 0 turns it off (default 1000)" },
  maxValueBytes: { env: ["VAULT_MAX_VALUE_BYTES"], kind: "string", help: "largest secret value in UTF-8 bytes (default 65536)" },
  trustProxy: { env: ["VAULT_TRUST_PROXY"], kind: "boolean", help: "take the client ip from X-Forwarded-For" },
  logLevel: { env: ["VAULT_LOG_LEVEL"], kind: "string", help: "debug, info, warn, error or silent (default info)" },
  authFailLimit: { env: ["VAULT_AUTH_FAIL_LIMIT"], kind: "string", help: "failed authentications per remote ip per window before 429 (default 20; 0: off)" },
  authFailWindowMs: { env: ["VAULT_AUTH_FAIL_WINDOW_MS"], kind: "string", help: "window of the failed-authentication limit, ms (default 60000)" },
  headersTimeoutMs: { env: ["VAULT_HEADERS_TIMEOUT_MS"], kind: "string", help: "time a client has to send a request's headers, ms (default 10000)" },
  requestTimeoutMs: { env: ["VAULT_REQUEST_TIMEOUT_MS"], kind: "string", help: "time a client has to send a whole request, ms (default 30000)" },
  keepAliveTimeoutMs: { env: ["VAULT_KEEP_ALIVE_TIMEOUT_MS"], kind: "string", help: "idle keep-alive connections are closed after this, ms (default 5000)" },
  maxConnections: { env: ["VAULT_MAX_CONNECTIONS"], kind: "string", help: "open client connections at most; more are closed at once (default 512)" },
  maxConnectionsPerIp: { env: ["VAULT_MAX_CONNECTIONS_PER_IP"], kind: "string", help: "open connections of one client address at most, 127.0.0.1 and ::1 exempt; more are closed at once (default 64; 0: no cap)" },
  webhooksPerScope: { env: ["VAULT_WEBHOOKS_PER_SCOPE"], kind: "string", help: "webhooks at most for the global scope and for each org (default 25)" },
  webhookFailingAfter: { env: ["VAULT_WEBHOOK_FAILING_AFTER"], kind: "string", help: "consecutive failed deliveries that mark a webhook failing: no more retries (default 5)" },
  webhookScopeConcurrency: { env: ["VAULT_WEBHOOK_SCOPE_CONCURRENCY"], kind: "string", help: "delivery slots (of 8) one scope, global or an org, may hold at once; fewer while its attempts time out (default 4)" },
  databaseUrl: { env: ["VAULT_DATABASE_URL"], kind: "string", help: "postgres://user:pass@host:5432/db selects PostgreSQL (several nodes on one database); unset: SQLite in the data directory" },
  databasePoolSize: { env: ["VAULT_DATABASE_POOL_SIZE"], kind: "string", help: "PostgreSQL connections per node at most (default 10)" },
  sharePage: { env: ["VAULT_SHARE_PAGE"], kind: "boolean", help: "serve the share pages: / (create) and /s/<id> (reveal) (default true; false: 404 there)" },
  shareAnonymous: { env: ["VAULT_SHARE_ANONYMOUS"], kind: "boolean", help: "let the create page at / make public secrets without a token, within caps (default false)" },
  shareAnonymousPerMinute: { env: ["VAULT_SHARE_ANONYMOUS_PER_MINUTE"], kind: "string", help: "anonymous creates per client address per minute (default 10)" },
  databasePreparedStatements: { env: ["VAULT_DATABASE_PREPARED_STATEMENTS"], kind: "boolean", help: "PostgreSQL: parse the hot-path statements once per connection (default true; false behind a transaction-mode pooler such as PgBouncer < 1.21)" },
  databaseGroupCommit: { env: ["VAULT_DATABASE_GROUP_COMMIT"], kind: "boolean", help: "PostgreSQL: the requests of one event-loop turn share one transaction and one COMMIT (default false)" },
};

/** The command-line flag of a setting: VAULT_DATA_DIR -> "data-dir". */
export function flagName(setting: Setting): string {
  const canonical = setting.env[0] ?? "";
  return canonical.replace(/^VAULT_/, "").toLowerCase().replace(/_/g, "-");
}

const intIn = (name: string, min: number, max: number) =>
  v.pipe(
    v.string(),
    v.trim(),
    v.regex(/^\d+$/, `${name} must be a whole number from ${min} to ${max}`),
    v.transform(Number),
    v.number(),
    v.minValue(min, `${name} must be a whole number from ${min} to ${max}`),
    v.maxValue(max, `${name} must be a whole number from ${min} to ${max}`),
  );

function parseBool(name: string, raw: string | boolean): boolean {
  if (typeof raw === "boolean") return raw;
  const s = raw.trim().toLowerCase();
  if (s === "true" || s === "1" || s === "yes") return true;
  if (s === "false" || s === "0" || s === "no" || s === "") return false;
  throw new ConfigError(`${name} must be true or false`);
}

function checked<T>(name: string, schema: v.GenericSchema<string, T>, raw: string): T {
  const result = v.safeParse(schema, raw);
  if (!result.success) throw new ConfigError(result.issues[0]?.message ?? `${name} is invalid`);
  return result.output;
}

/**
 * Builds the Config from command-line flags and the environment; flags win
 * (decisions.md section 1). Writes nothing and touches no file.
 *
 * @param flags values parsed by util.parseArgs with serveFlagOptions().
 * @param env usually process.env.
 * @throws ConfigError with one line naming the bad setting.
 */
export function loadConfig(
  flags: Record<string, string | boolean | undefined>,
  env: Record<string, string | undefined>,
): Config {
  const raw = (field: keyof Config): string | boolean | undefined => {
    const setting = SETTINGS[field];
    const flag = flags[flagName(setting)];
    if (flag !== undefined) return flag;
    for (const name of setting.env) {
      const value = env[name];
      if (value !== undefined && value !== "") return value;
    }
    return undefined;
  };
  const str = (field: keyof Config): string | undefined => {
    const value = raw(field);
    if (typeof value === "boolean") throw new ConfigError(`${SETTINGS[field].env[0]} needs a value`);
    return value;
  };
  const name = (field: keyof Config) => SETTINGS[field].env[0] ?? field;
  const int = (field: keyof Config, fallback: number, min: number, max: number): number => {
    const value = str(field);
    return value === undefined ? fallback : checked(name(field), intIn(name(field), min, max), value);
  };

  const port = int("port", 8484, 0, 65535);
  const host = str("host")?.trim() || "127.0.0.1";
  if (!isHost(host)) throw new ConfigError("VAULT_HOST must be an IP address or a host name");
  const dataDir = str("dataDir") ?? "./.vault";

  const masterKey = str("masterKey");
  if (masterKey !== undefined && masterKey.length < 16) {
    throw new ConfigError("VAULT_MASTER_KEY must be at least 16 characters");
  }
  if (masterKey !== undefined && /\s/.test(masterKey)) {
    throw new ConfigError("VAULT_MASTER_KEY must not contain white space");
  }
  const encryptionRaw = str("encryptionKey");
  const encryptionKey = encryptionRaw === undefined ? undefined : rootKeyOf("VAULT_ENCRYPTION_KEY", encryptionRaw);
  const previousEncryptionKeys = (str("previousEncryptionKeys") ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")
    .map((s) => rootKeyOf("VAULT_PREVIOUS_ENCRYPTION_KEYS", s));

  const logLevel = (str("logLevel") ?? "info").trim().toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError(`VAULT_LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}`);
  }

  const publicUrlRaw = str("publicUrl");
  let publicUrl: string;
  if (publicUrlRaw === undefined) {
    publicUrl = defaultPublicUrl(host, port);
  } else {
    let parsed: URL;
    try {
      parsed = new URL(publicUrlRaw);
    } catch {
      throw new ConfigError("VAULT_PUBLIC_URL must be an absolute http(s) URL");
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
      throw new ConfigError("VAULT_PUBLIC_URL must be an absolute http(s) URL");
    }
    publicUrl = publicUrlRaw.replace(/\/+$/, "");
  }

  const licensePublicKey = str("licensePublicKey")?.trim();
  if (licensePublicKey !== undefined && parseLicensePublicKey(licensePublicKey) === undefined) {
    throw new ConfigError("VAULT_LICENSE_PUBLIC_KEY must be base64 of a 32-byte Ed25519 key, or a PEM public key");
  }

  const webhookSecret = str("webhookSecret");
  if (webhookSecret !== undefined && webhookSecret.length < 16) {
    throw new ConfigError("VAULT_WEBHOOK_SECRET must be at least 16 characters");
  }

  const metricsToken = str("metricsToken");
  if (metricsToken !== undefined && (metricsToken.length < 16 || /\s/.test(metricsToken))) {
    throw new ConfigError("VAULT_METRICS_TOKEN must be at least 16 characters, without white space");
  }

  const headersTimeoutMs = int("headersTimeoutMs", DEFAULT_HEADERS_TIMEOUT_MS, 100, 600_000);
  const requestTimeoutMs = int("requestTimeoutMs", DEFAULT_REQUEST_TIMEOUT_MS, 100, 3_600_000);
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new ConfigError("VAULT_HEADERS_TIMEOUT_MS must not be larger than VAULT_REQUEST_TIMEOUT_MS");
  }

  const databaseUrl = str("databaseUrl")?.trim();
  if (databaseUrl !== undefined) {
    let protocol = "";
    try {
      protocol = new URL(databaseUrl).protocol;
    } catch {
      throw new ConfigError("VAULT_DATABASE_URL must be a URL: postgres://user:password@host:5432/database");
    }
    if (protocol !== "postgres:" && protocol !== "postgresql:") {
      throw new ConfigError("VAULT_DATABASE_URL must start with postgres:// or postgresql://");
    }
    // Nodes share these; a node must never generate its own.
    for (const [value, name] of [
      [encryptionKey, "VAULT_ENCRYPTION_KEY"],
      [masterKey, "VAULT_MASTER_KEY"],
      [webhookSecret, "VAULT_WEBHOOK_SECRET"],
    ] as const) {
      if (value === undefined) throw new ConfigError(`${name} must be set with VAULT_DATABASE_URL: every node of one database shares it`);
    }
  }

  return {
    databaseUrl,
    databasePoolSize: int("databasePoolSize", 10, 1, 1000),
    databasePreparedStatements: parseBool("VAULT_DATABASE_PREPARED_STATEMENTS", raw("databasePreparedStatements") ?? true),
    databaseGroupCommit: parseBool("VAULT_DATABASE_GROUP_COMMIT", raw("databaseGroupCommit") ?? false),
    port,
    host,
    dataDir,
    masterKey,
    encryptionKey,
    previousEncryptionKeys,
    publicUrl,
    licenseKey: str("licenseKey")?.trim(),
    licensePublicKey,
    webhookSecret,
    metricsToken,
    webhookAllowPrivate: parseBool("VAULT_WEBHOOK_ALLOW_PRIVATE", raw("webhookAllowPrivate") ?? false),
    webhookTimeoutMs: int("webhookTimeoutMs", 10_000, 1, 600_000),
    webhookMaxAttempts: int("webhookMaxAttempts", 8, 1, 100),
    webhookRetryBaseMs: int("webhookRetryBaseMs", 1000, 1, 3_600_000),
    sweepIntervalMs: int("sweepIntervalMs", 1000, 0, 86_400_000),
    maxValueBytes: int("maxValueBytes", 65_536, 1, 1_048_576),
    trustProxy: parseBool("VAULT_TRUST_PROXY", raw("trustProxy") ?? false),
    logLevel: logLevel as LogLevel,
    // A direct loopback peer is never counted (failed-auth.ts exemptFromCounting).
    authFailLimit: int("authFailLimit", DEFAULT_AUTH_FAIL_LIMIT, 0, 1_000_000),
    authFailWindowMs: int("authFailWindowMs", DEFAULT_AUTH_FAIL_WINDOW_MS, 1000, 86_400_000),
    headersTimeoutMs,
    requestTimeoutMs,
    keepAliveTimeoutMs: int("keepAliveTimeoutMs", DEFAULT_KEEP_ALIVE_TIMEOUT_MS, 100, 600_000),
    maxConnections: int("maxConnections", DEFAULT_MAX_CONNECTIONS, 1, 1_000_000),
    maxConnectionsPerIp: int("maxConnectionsPerIp", DEFAULT_MAX_CONNECTIONS_PER_IP, 0, 1_000_000),
    webhooksPerScope: int("webhooksPerScope", DEFAULT_WEBHOOKS_PER_SCOPE, 1, 100_000),
    webhookFailingAfter: int("webhookFailingAfter", DEFAULT_WEBHOOK_FAILING_AFTER, 1, 1_000_000),
    sharePage: parseBool("VAULT_SHARE_PAGE", raw("sharePage") ?? true),
    shareAnonymous: parseBool("VAULT_SHARE_ANONYMOUS", raw("shareAnonymous") ?? false),
    shareAnonymousPerMinute: int("shareAnonymousPerMinute", DEFAULT_SHARE_ANONYMOUS_PER_MINUTE, 1, 100_000),
    webhookScopeConcurrency: int("webhookScopeConcurrency", DEFAULT_WEBHOOK_SCOPE_CONCURRENCY, 1, 8),
  };
}

/**
 * The default VAULT_PUBLIC_URL, `http://{host}:{port}` (decisions.md section
 * 1), an IPv6 host in brackets. With port 0 the server replaces it once it
 * knows the port it listens on.
 */
export function defaultPublicUrl(host: string, port: number): string {
  const shownHost = host.includes(":") ? `[${host}]` : host;
  return `http://${shownHost}:${port}`;
}

const HOST_NAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/** An IPv4 or IPv6 address, or a syntactically valid host name (all-digit dotted names must be IPv4). */
function isHost(host: string): boolean {
  if (isIP(host) !== 0) return true;
  if (/^[\d.]+$/.test(host) || host.includes(":")) return false;
  return HOST_NAME.test(host);
}

function rootKeyOf(name: string, text: string): Buffer {
  const key = parseRootKey(text);
  if (key === undefined) throw new ConfigError(`${name} must be 64 hex characters or base64 of 32 bytes`);
  return key;
}
