import type { LogLevel } from "../log/levels.js";

/** The validated configuration the server is built from (docs/configuration.md). */
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
  /** VAULT_TLS_CERT: the PEM certificate chain file; set with tlsKey, the vault serves HTTPS. */
  tlsCert: string | undefined;
  /** VAULT_TLS_KEY: the PEM private key file of tlsCert. */
  tlsKey: string | undefined;
  /** VAULT_HTTP_REDIRECT_PORT: a plain-HTTP listener redirecting to HTTPS (0 picks a free port); undefined: none. */
  httpRedirectPort: number | undefined;
  /** VAULT_ACME_DOMAINS: the names of the certificate the vault gets by ACME (docs/deploy.md "Certificates by ACME"); undefined: no ACME. */
  acmeDomains: string[] | undefined;
  /** VAULT_ACME_EMAIL: the ACME account's contact; undefined: none. */
  acmeEmail: string | undefined;
  /** VAULT_ACME_DIRECTORY: the ACME directory URL (default Let's Encrypt production). */
  acmeDirectory: string;
  licenseKey: string | undefined;
  licensePublicKey: string | undefined;
  webhookSecret: string | undefined;
  /** Bearer token that may read GET /metrics and nothing else; undefined: only the master key may. */
  metricsToken: string | undefined;
  webhookAllowPrivate: boolean;
  /** VAULT_WEBHOOK_ORG_GLOBAL_SIGNATURE: org deliveries also carry X-Vault-Signature (default true). */
  webhookOrgGlobalSignature: boolean;
  /** One delivery attempt's limit, milliseconds. */
  webhookTimeoutMs: number;
  webhookMaxAttempts: number;
  /** Backoff base, milliseconds. */
  webhookRetryBaseMs: number;
  /** Sweeper period, milliseconds; 0 turns the sweeper off. */
  sweepIntervalMs: number;
  /** Seconds a first answer to an Idempotency-Key is kept (VAULT_IDEMPOTENCY_WINDOW). */
  idempotencyWindow: number;
  /** Derived record keys the cipher keeps in memory at most; 0 keeps none. */
  recordKeyCache: number;
  /** Largest secret value, UTF-8 bytes. */
  maxValueBytes: number;
  /** Largest file of an end-to-end dead drop, bytes (VAULT_MAX_FILE_BYTES). */
  maxFileBytes: number;
  trustProxy: boolean;
  logLevel: LogLevel;
  /** Failed authentications from one ip within the window before 429 (default 20); 0 turns the guard off. */
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
   * prepared statements (store/pg/batch/prepared.ts; default true). False for a
   * pooler in transaction mode that does not track them (PgBouncer before
   * 1.21, or with max_prepared_statements = 0).
   */
  databasePreparedStatements: boolean;
  /**
   * VAULT_DATABASE_GROUP_COMMIT: the units of work of one event-loop turn
   * share one PostgreSQL transaction (store/pg/batch/group-commit.ts; default true,
   * docs/performance.md "PostgreSQL").
   */
  databaseGroupCommit: boolean;
  /** VAULT_DATABASE_RETRY_MS: how long a unit that failed before its COMMIT is run again on PostgreSQL, ms (0: never). */
  databaseRetryMs: number;
  /** VAULT_OIDC_ISSUER: the OpenID Connect issuer URL (docs/sso.md); undefined: no single sign-on. */
  oidcIssuer: string | undefined;
  /** VAULT_OIDC_CLIENT_ID: the vault's client id at the provider. */
  oidcClientId: string | undefined;
  /** VAULT_OIDC_CLIENT_SECRET: the client secret; never logged. */
  oidcClientSecret: string | undefined;
  /** VAULT_OIDC_CLIENT_SECRET_FILE: a file holding the client secret, read at the start. */
  oidcClientSecretFile: string | undefined;
  /** VAULT_OIDC_REDIRECT_URL; undefined: VAULT_PUBLIC_URL/ui/oidc/callback. */
  oidcRedirectUrl: string | undefined;
  /** VAULT_OIDC_SCOPES, separated by spaces. */
  oidcScopes: string;
  /** VAULT_OIDC_ROLE_CLAIM: the ID-token claim mapped to a role (default `groups`). */
  oidcRoleClaim: string;
  /** VAULT_OIDC_ORG: the org id people land in. */
  oidcOrg: string | undefined;
  /** VAULT_OIDC_ROLE_MAP: claim value to role, in the order given (the first match wins). */
  oidcRoleMap: Array<{ group: string; role: string }>;
  /** VAULT_OIDC_KEY_TTL: the lifetime of a key minted at sign-in, seconds (default 12 hours). */
  oidcKeyTtl: number;
  /** VAULT_CONSOLE_TOKEN_SIGNIN: false refuses principal keys at the console's token sign-in. */
  consoleTokenSignin: boolean;
  /** VAULT_SHARE_PAGE: serve the share pages (`/`, `/s/<id>`); false: 404 there, for vaults used only by programs. */
  sharePage: boolean;
  /** VAULT_SHARE_ANONYMOUS: the create page may make public secrets without a token, within the caps of docs/share.md. */
  shareAnonymous: boolean;
  /** Anonymous creates per client address per minute (VAULT_SHARE_ANONYMOUS_PER_MINUTE). */
  shareAnonymousPerMinute: number;
  /** Anonymous creates per minute in all (VAULT_SHARE_ANONYMOUS_TOTAL_PER_MINUTE). */
  shareAnonymousTotalPerMinute: number;
  /** Live anonymous links in all (VAULT_SHARE_ANONYMOUS_MAX_SECRETS). */
  shareAnonymousMaxSecrets: number;
  /** Stored bytes of live anonymous links in all (VAULT_SHARE_ANONYMOUS_MAX_BYTES). */
  shareAnonymousMaxBytes: number;
  /** Live anonymous links per IPv4 address or IPv6 /48 (VAULT_SHARE_ANONYMOUS_NET_MAX_SECRETS). */
  shareAnonymousNetMaxSecrets: number;
  /** Stored bytes of live anonymous links per IPv4 address or IPv6 /48 (VAULT_SHARE_ANONYMOUS_NET_MAX_BYTES). */
  shareAnonymousNetMaxBytes: number;
}

/** A bad setting: the message names it. The command prints it and exits 2. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

