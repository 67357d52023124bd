import { flag, int, row, text } from "./setting.js";
import type { DeriveFrom, SettingsTable } from "./setting.js";
import * as value from "./values.js";
import { DURATION_FORMS } from "../model/duration.js";

/**
 * The default VAULT_PUBLIC_URL, `http://{host}:{port}`, or `https://{host}:{port}`
 * with TLS on (docs/configuration.md), an IPv6 host in brackets. With port 0
 * the server replaces it once it knows the port it listens on. With
 * certificates by ACME (`domain`: the first of VAULT_ACME_DOMAINS) it is
 * `https://{domain}`, with `:{port}` unless the port is 443: the name the
 * certificate is for, not the bind address.
 */
export function defaultPublicUrl(host: string, port: number, tls = false, domain?: string): string {
  if (domain !== undefined) return port === 443 ? `https://${domain}` : `https://${domain}:${port}`;
  const shownHost = host.includes(":") ? `[${host}]` : host;
  return `${tls ? "https" : "http"}://${shownHost}:${port}`;
}

/**
 * Every setting of the vault, by its Config field, in the order of `--help`
 * and docs/configuration.md. The only home of each setting's variable, flag,
 * default, accepted values and help (docs/configuration.md is generated from
 * it: `npm run gen:config-docs`).
 */
export const SETTINGS: SettingsTable = {
  port: row(["VAULT_PORT", "PORT"], int(0, 65535, 8484), "TCP port", "TCP port (0 picks a free one)"),
  host: row(
    ["VAULT_HOST"],
    text("an IP address or a host name", value.host, "127.0.0.1"),
    "bind address (0.0.0.0 to self-host)",
    "bind address (an IP address or a host name); `0.0.0.0` for self-hosting",
  ),
  dataDir: row(
    ["VAULT_DATA_DIR"],
    text("a directory, or `:memory:`", value.textOf, "./.vault"),
    "data directory (:memory: for nothing on disk)",
    "holds `vault.db` and generated key files; `:memory:` keeps everything in memory and writes nothing",
  ),
  masterKey: row(
    ["VAULT_MASTER_KEY", "VAULT_API_KEY"],
    text("16+ characters, no white space", value.masterToken, undefined, "generated"),
    "master bearer token, 16+ chars (unset: generated into <data dir>/master.key)",
    "master bearer token. Unset: the first start generates one into `<data dir>/master.key` (mode 0600) and prints it once to stderr",
  ),
  encryptionKey: row(
    ["VAULT_ENCRYPTION_KEY"],
    text("64 hex characters or base64 of 32 bytes", value.rootKey, undefined, "generated"),
    "256-bit root key, 64 hex chars or base64 (unset: generated into <data dir>/encryption.key)",
    "256-bit root key. Unset: generated into `<data dir>/encryption.key` (mode 0600) with a warning that the key sits beside the data",
  ),
  previousEncryptionKeys: row(
    ["VAULT_PREVIOUS_ENCRYPTION_KEYS"],
    Object.assign(text<Buffer[]>("root keys, comma-separated", value.rootKeyList, [], "none"), { derive: () => [] }),
    "comma-separated older root keys, to read records written before a rotation",
    "older root keys, to read records written before a rotation",
  ),
  publicUrl: Object.assign(
    row(
      ["VAULT_PUBLIC_URL"],
      text("an absolute http(s) URL", value.httpUrl, "", "`http://{host}:{port}` (`https://` with TLS; `https://{first ACME domain}[:{port}]` with ACME)"),
      "base of the url returned for public secrets (default http://{host}:{port}, https:// with TLS, the first ACME domain with ACME)",
      "base of the `url` returned for public secrets (`VAULT_PUBLIC_URL/s/<id>`, the recipient page: [share.md](share.md)); with `--port 0` the default names the port actually listened on. " +
        "When `VAULT_HOST` is not a loopback address and this is unset, the start logs a warning: share links would name the bind address, which people elsewhere may not reach",
    ),
    { derive: (at: DeriveFrom) => defaultPublicUrl(at.host, at.port, at.tls, at.domain) },
  ),
  // HTTPS built in (docs/deploy.md, docs/configuration.md "HTTPS").
  tlsCert: row(
    ["VAULT_TLS_CERT"],
    text("a PEM file", value.filePath, undefined, "none"),
    "PEM certificate chain file: serve HTTPS (with VAULT_TLS_KEY); re-read on SIGHUP and when it changes",
    "a PEM file with the server's certificate, then its intermediates: the vault serves HTTPS (TLS 1.2 or later, HTTP/1.1) on `VAULT_PORT`, and every answer carries `Strict-Transport-Security: max-age=63072000`. Set with `VAULT_TLS_KEY`; both files are read again on SIGHUP and when either changes (a new pair that does not load is refused with a log line, the old one kept) ([deploy.md](deploy.md))",
  ),
  tlsKey: row(
    ["VAULT_TLS_KEY"],
    text("a PEM file", value.filePath, undefined, "none"),
    "PEM private key file of VAULT_TLS_CERT",
    "a PEM file with the private key of `VAULT_TLS_CERT` (unencrypted; readable by the vault's user only: mode 0600, or 0640 with a group of its own). A key that does not match the certificate refuses the start",
  ),
  httpRedirectPort: row(
    ["VAULT_HTTP_REDIRECT_PORT"],
    text("0 to 65535", value.port, undefined, "none"),
    "also listen on this port with plain HTTP and redirect (308) to HTTPS; needs VAULT_TLS_CERT or VAULT_ACME_DOMAINS",
    "also listen on this port (on `VAULT_HOST`) with plain HTTP, answering every request with `308` to the same path on HTTPS (`VAULT_PUBLIC_URL` when it is `https://`, else the request's host on `VAULT_PORT`); `/.well-known/acme-challenge/*` answers ACME HTTP-01 challenges of `VAULT_ACME_DOMAINS` (404 otherwise). Needs `VAULT_TLS_CERT` or `VAULT_ACME_DOMAINS`; usually `80` with `VAULT_PORT=443` ([deploy.md](deploy.md))",
  ),
  acmeDomains: row(
    ["VAULT_ACME_DOMAINS"],
    text<string[] | undefined>("DNS names, comma-separated", value.domainList, undefined, "none"),
    "comma-separated names: get and renew the HTTPS certificate by ACME (HTTP-01 on VAULT_HTTP_REDIRECT_PORT)",
    "DNS names, comma-separated: the vault gets its HTTPS certificate for them from the ACME CA of `VAULT_ACME_DIRECTORY` (HTTP-01 answered on `VAULT_HTTP_REDIRECT_PORT`, which must be set and reachable on port 80 of those names), keeps it with its account key in `<data dir>/acme/` (mode 0600) and renews it when two thirds of its lifetime have passed; the nodes of one PostgreSQL database share it, one ordering at a time. Until it exists, HTTPS serves a placeholder and `/health` answers 503 saying why. Not with `VAULT_TLS_CERT` ([deploy.md](deploy.md) \"Certificates by ACME\")",
  ),
  acmeEmail: row(
    ["VAULT_ACME_EMAIL"],
    text<string | undefined>("an email address", value.email, undefined, "none"),
    "contact address of the ACME account (expiry notices)",
    "contact address of the ACME account, where the CA may send expiry and policy notices; unset: an account without contact",
  ),
  acmeDirectory: row(
    ["VAULT_ACME_DIRECTORY"],
    text("an absolute http(s) URL", value.httpUrl, "https://acme-v02.api.letsencrypt.org/directory"),
    "ACME directory URL (default Let's Encrypt production)",
    "the ACME CA's directory URL: Let's Encrypt's production one by default; its staging one, `https://acme-staging-v02.api.letsencrypt.org/directory`, issues untrusted certificates under far higher rate limits, for trying a setup first",
  ),
  // Single sign-on with OpenID Connect (docs/sso.md).
  oidcIssuer: row(
    ["VAULT_OIDC_ISSUER"],
    text("an https URL (http only on a loopback host)", value.oidcIssuer, undefined, "none"),
    "OpenID Connect issuer URL: people sign in to the console with it (docs/sso.md)",
    "the OpenID Connect issuer URL of the identity provider (its `/.well-known/openid-configuration` is read at the first sign-in). With it, the console offers \"Sign in with\" the provider and `ephemeral-vault login` works; needs `VAULT_OIDC_CLIENT_ID`, `VAULT_OIDC_ORG` and `VAULT_OIDC_ROLE_MAP`. `https://` only, except on a loopback host (`127.0.0.1`, `::1`, `localhost`) for development ([sso.md](sso.md))",
  ),
  oidcClientId: row(
    ["VAULT_OIDC_CLIENT_ID"],
    text("the client id registered at the provider", value.textOf, undefined, "none"),
    "OpenID Connect client id of the vault at the provider",
    "the vault's client id at the identity provider ([sso.md](sso.md))",
  ),
  oidcClientSecret: row(
    ["VAULT_OIDC_CLIENT_SECRET"],
    text("the client secret", value.textOf, undefined, "none"),
    "OpenID Connect client secret (or VAULT_OIDC_CLIENT_SECRET_FILE); unset: a public client (PKCE only)",
    "the vault's client secret at the provider, sent with `client_secret_post`; never logged or printed. Unset (and no file): a public client that proves itself with PKCE only ([sso.md](sso.md))",
  ),
  oidcClientSecretFile: row(
    ["VAULT_OIDC_CLIENT_SECRET_FILE"],
    text("a file", value.filePath, undefined, "none"),
    "file holding the OpenID Connect client secret (instead of VAULT_OIDC_CLIENT_SECRET)",
    "a file holding the client secret (its white space trimmed), read at the start; not with `VAULT_OIDC_CLIENT_SECRET`",
  ),
  oidcRedirectUrl: row(
    ["VAULT_OIDC_REDIRECT_URL"],
    text("an absolute http(s) URL", value.httpUrl, undefined, "`VAULT_PUBLIC_URL/ui/oidc/callback`"),
    "redirect URL registered at the provider (default VAULT_PUBLIC_URL/ui/oidc/callback)",
    "the redirect URL registered at the provider; the provider sends the browser back there after sign-in. Its path must be `/ui/oidc/callback` under the vault",
  ),
  oidcScopes: row(
    ["VAULT_OIDC_SCOPES"],
    text("scopes separated by spaces, `openid` among them", value.oidcScopes, "openid profile email groups"),
    "scopes asked of the provider",
    "the scopes asked of the provider, separated by spaces; `openid` must be one of them. The ID token must carry `VAULT_OIDC_ROLE_CLAIM` ([sso.md](sso.md) \"Claims\")",
  ),
  oidcRoleClaim: row(
    ["VAULT_OIDC_ROLE_CLAIM"],
    text("a claim name", value.claimName, "groups"),
    "ID-token claim whose values VAULT_OIDC_ROLE_MAP maps to roles",
    "the ID-token claim (a list of strings, or one string) whose values `VAULT_OIDC_ROLE_MAP` maps to a role",
  ),
  oidcOrg: row(
    ["VAULT_OIDC_ORG"],
    text("an org id (`org_...`)", value.orgId, undefined, "none"),
    "org id people signing in with the provider land in",
    "the organization (its id, `org_...`) whose principals the people signing in with the provider are; each is made at their first sign-in ([sso.md](sso.md))",
  ),
  oidcRoleMap: row(
    ["VAULT_OIDC_ROLE_MAP"],
    text("`group=role,...`", value.roleMap, [], "none"),
    "claim value to role, e.g. vault-admins=admin,devs=writer; the first pair that matches wins",
    "which role a claim value gives, `group=role` pairs separated by commas (`vault-admins=admin,devs=writer`); the first pair, from the left, whose group the person has decides their role (the role is after the last `=`; a group cannot hold a comma). A person with none of them is refused ([sso.md](sso.md) \"Roles\")",
  ),
  oidcKeyTtl: row(
    ["VAULT_OIDC_KEY_TTL"],
    text(DURATION_FORMS, value.duration, 43_200, "`12h`"),
    "lifetime of a principal key minted at sign-in (console session, ephemeral-vault login)",
    "lifetime of the principal key minted at each sign-in with the provider: the console session's (at most 12 hours, the session's own limit) and the one `ephemeral-vault login` stores. Seconds or a number with a unit (`30m`, `12h`, `7d`)",
  ),
  consoleTokenSignin: row(
    ["VAULT_CONSOLE_TOKEN_SIGNIN"],
    flag(true),
    "false: the console refuses principal keys at token sign-in (people use the provider); the master key and scoped keys still sign in",
    "`false`: the console's token sign-in refuses principal keys (`vpk_`): people sign in with the provider. The master key and scoped keys still sign in with their token ([console.md](console.md), [sso.md](sso.md))",
  ),
  sharePage: row(
    ["VAULT_SHARE_PAGE"],
    flag(true),
    "serve the share pages: / (create) and /s/<id> (reveal); false: 404 there",
    "serve the share pages: the create page at `/`, the recipient page `/s/<id>` and its reveal ([share.md](share.md)). `false`: all of them answer the API's JSON 404, and a public secret's `url` names the API read (`/secrets/<id>`), for vaults used only by programs",
  ),
  shareAnonymous: row(
    ["VAULT_SHARE_ANONYMOUS"],
    flag(false),
    "let the create page at / make public secrets without a token, within caps",
    "let the create page make public secrets without a token, under caps the server enforces: TTL at most 7 days, at most 10 reads, the usual value size, the rates and the count and byte caps of the `VAULT_SHARE_ANONYMOUS_*` settings below. They do not count against the free tier of token holders: their caps are their own ([share.md](share.md))",
  ),
  shareAnonymousPerMinute: row(
    ["VAULT_SHARE_ANONYMOUS_PER_MINUTE"],
    int(1, 100_000, 10),
    "anonymous creates per client address per minute",
    "anonymous creates per client address (IPv6 by its /64) per minute; more get 429 with `Retry-After`",
  ),
  shareAnonymousTotalPerMinute: row(
    ["VAULT_SHARE_ANONYMOUS_TOTAL_PER_MINUTE"],
    int(1, 1_000_000, 60),
    "anonymous creates per minute from every client together",
    "anonymous creates per minute from every client together; more get 429 with `Retry-After`",
  ),
  shareAnonymousMaxSecrets: row(
    ["VAULT_SHARE_ANONYMOUS_MAX_SECRETS"],
    int(1, 100_000_000, 1000),
    "live anonymous links in all",
    "live anonymous links (not expired, not burned) in all; a create past it gets 429 until some expire or are read",
  ),
  shareAnonymousMaxBytes: row(
    ["VAULT_SHARE_ANONYMOUS_MAX_BYTES"],
    int(1, 1_000_000_000_000, 16 * 1024 * 1024),
    "stored bytes of live anonymous links in all",
    "stored (ciphertext) bytes of live anonymous links in all; a create that would pass it gets 429",
  ),
  shareAnonymousNetMaxSecrets: row(
    ["VAULT_SHARE_ANONYMOUS_NET_MAX_SECRETS"],
    int(1, 100_000_000, 20),
    "live anonymous links per IPv4 address or IPv6 /48",
    "live anonymous links made from one IPv4 address or one IPv6 /48; a create past it gets 429",
  ),
  shareAnonymousNetMaxBytes: row(
    ["VAULT_SHARE_ANONYMOUS_NET_MAX_BYTES"],
    int(1, 1_000_000_000_000, 1024 * 1024),
    "stored bytes of live anonymous links per IPv4 address or IPv6 /48",
    "stored (ciphertext) bytes of live anonymous links made from one IPv4 address or one IPv6 /48; a create that would pass it gets 429",
  ),
  licenseKey: row(
    ["VAULT_LICENSE_KEY"],
    text("a license token", (raw, name) => value.textOf(raw, name).trim(), undefined, "none"),
    "license token; without a valid one at most 100 active secrets",
    "license token (below)",
  ),
  licensePublicKey: row(
    ["VAULT_LICENSE_PUBLIC_KEY"],
    text("base64 of 32 bytes, or PEM", value.licensePublicKey, undefined, "none"),
    "Ed25519 public key of the license issuer (base64 of 32 bytes, or PEM)",
    "Ed25519 public key of the license issuer: base64 of the 32 raw bytes, or PEM (SPKI)",
  ),
  // The webhooks (docs/webhooks.md).
  webhookSecret: row(
    ["VAULT_WEBHOOK_SECRET"],
    text("16+ characters", value.longSecret, undefined, "generated"),
    "HMAC key for webhook signatures (unset: generated into <data dir>/webhook.secret)",
    "HMAC key of webhook signatures (`X-Vault-Signature`); each webhook's own signing secret (`webhook-signature`) is derived from it, so changing it changes them all ([webhooks.md](webhooks.md)). Unset: generated into `<data dir>/webhook.secret` and printed once",
  ),
  webhookAllowPrivate: row(
    ["VAULT_WEBHOOK_ALLOW_PRIVATE"],
    flag(false),
    "let webhooks target loopback and private addresses (development only)",
    "lets webhooks target loopback and private addresses (development and tests only); the start then logs a warning saying so",
  ),
  webhookOrgGlobalSignature: row(
    ["VAULT_WEBHOOK_ORG_GLOBAL_SIGNATURE"],
    flag(true),
    "false: an org's deliveries carry only the webhook's own signature, no X-Vault-Signature",
    "`true`: every delivery carries `X-Vault-Signature` (HMAC under `VAULT_WEBHOOK_SECRET`), as the contract's webhook headers say. `false`: an org webhook's deliveries carry only the Standard Webhooks `webhook-signature` under that webhook's own secret, so the operator's secret verifies no tenant's delivery; global webhooks keep both ([webhooks.md](webhooks.md))",
  ),
  webhookTimeoutMs: row(["VAULT_WEBHOOK_TIMEOUT_MS"], int(1, 600_000, 10_000), "one delivery attempt's time limit, ms", "one delivery attempt's time limit, ms"),
  webhookMaxAttempts: row(["VAULT_WEBHOOK_MAX_ATTEMPTS"], int(1, 100, 8), "attempts per delivery, the first included", "attempts per delivery, the first included"),
  webhookRetryBaseMs: row(
    ["VAULT_WEBHOOK_RETRY_BASE_MS"],
    int(1, 3_600_000, 1000),
    "retry backoff base, ms",
    "backoff base, ms: attempt n (n >= 2) waits `base * 2^(n-2)` ms, +-20% jitter, capped at 1 hour",
  ),
  webhooksPerScope: row(
    ["VAULT_WEBHOOKS_PER_SCOPE"],
    int(1, 100_000, 25),
    "webhooks at most for the global scope and for each org",
    "webhooks at most for the global scope and for each org; one more is 409 ([webhooks.md](webhooks.md))",
  ),
  webhookScopeConcurrency: row(
    ["VAULT_WEBHOOK_SCOPE_CONCURRENCY"],
    int(1, 8, 4),
    "delivery slots (of 8) one scope, global or an org, may hold at once; fewer while its attempts time out",
    "delivery slots (of the worker's 8) one scope, the global one or an org, may hold at once; a scope whose attempts time out gets fewer, and such scopes hold at most half the slots together ([webhooks.md](webhooks.md))",
  ),
  webhookFailingAfter: row(
    ["VAULT_WEBHOOK_FAILING_AFTER"],
    int(1, 1_000_000, 5),
    "consecutive failed deliveries that mark a webhook failing: no more retries",
    "consecutive failed deliveries (every attempt failed) after which a webhook is marked failing: its deliveries get one attempt each, no retries, until one succeeds ([webhooks.md](webhooks.md))",
  ),
  sweepIntervalMs: row(
    ["VAULT_SWEEP_INTERVAL_MS"],
    int(0, 86_400_000, 1000),
    "TTL sweeper period, ms; 0 turns it off",
    "period of the TTL sweeper, ms; `0` turns it off (expired secrets are still never served)",
  ),
  idempotencyWindow: row(
    ["VAULT_IDEMPOTENCY_WINDOW"],
    int(1, 86_400, 600),
    "seconds a first answer to an Idempotency-Key is kept for its retries",
    "seconds the first answer of a request sent with an `Idempotency-Key` is kept (encrypted) for its retries, then deleted like a burned value ([api.md](api.md) \"Retries\")",
  ),
  recordKeyCache: row(
    ["VAULT_RECORD_KEY_CACHE"],
    int(0, 4_000_000, 16_384),
    "derived record keys kept in memory at most (about 140 bytes each); 0 keeps none",
    "derived record keys (one per secret, HKDF of the root key and the record's salt) kept in memory at most, oldest dropped first: about 140 bytes each, so the default takes about 2 MB whatever the number of secrets (a million would take about 140 MB). A read of a secret whose key is kept skips the derivation (a few microseconds); `0` keeps none ([performance.md](performance.md) \"Reads at scale\")",
  ),
  maxValueBytes: row(
    ["VAULT_MAX_VALUE_BYTES"],
    int(1, 1_048_576, 65_536),
    "largest secret value in UTF-8 bytes",
    "largest secret value in UTF-8 bytes; larger: 413",
  ),
  maxFileBytes: row(
    ["VAULT_MAX_FILE_BYTES"],
    int(1, 67_108_864, 10_485_760),
    "largest file a dead drop carries, bytes (at most 64 MiB)",
    "largest file an end-to-end dead drop carries (envelope version 3, [share.md](share.md) \"Files\"), in bytes: 10 MiB by default, 64 MiB at most (the server holds a create's body in memory while it stores it, its envelope being 1.33 times the file, and for a moment several copies of it: about 30 MiB more for each 10 MiB upload in flight, [performance.md](performance.md) \"Files\"); larger: 413 naming the limit. Plain values keep `VAULT_MAX_VALUE_BYTES`",
  ),
  trustProxy: row(
    ["VAULT_TRUST_PROXY"],
    flag(false),
    "take the client ip from X-Forwarded-For",
    "take the client ip from `X-Forwarded-For`, its last entry (the address your proxy saw); only behind a proxy you control",
  ),
  logLevel: row(
    ["VAULT_LOG_LEVEL"],
    text("`debug`, `info`, `warn`, `error`, `silent`", value.logLevel, "info"),
    "debug, info, warn, error or silent",
    "`info` logs one line per request ([operations.md](operations.md#logs))",
  ),
  metricsToken: row(
    ["VAULT_METRICS_TOKEN"],
    text("16+ characters, no white space", value.metricsToken, undefined, "none"),
    "bearer token for GET /metrics only, 16+ chars (unset: the master key may always read /metrics)",
    "a bearer token that may read `GET /metrics` and nothing else (403 elsewhere); the master key may always read it ([operations.md](operations.md#metrics))",
  ),
  authFailLimit: row(
    ["VAULT_AUTH_FAIL_LIMIT"],
    int(0, 1_000_000, 20),
    "failed authentications per remote ip per window before 429; 0: off",
    "brute-force guard: failed authentications (401) from one remote ip within the window after which that ip gets 429 with `Retry-After` until the window passes, whatever token it sends. A direct loopback peer is never counted; a loopback address in `X-Forwarded-For` is. `0` turns it off ([audit.md](audit.md))",
  ),
  authFailWindowMs: row(
    ["VAULT_AUTH_FAIL_WINDOW_MS"],
    int(1000, 86_400_000, 60_000),
    "window of the failed-authentication limit, ms",
    "the window of `VAULT_AUTH_FAIL_LIMIT`, ms",
  ),
  headersTimeoutMs: row(
    ["VAULT_HEADERS_TIMEOUT_MS"],
    int(100, 600_000, 10_000),
    "time a client has to send a request's headers, ms",
    "time a client has to send a request's complete headers, ms; then 408 and the connection is closed. A real client sends them at once; a client dribbling them (slowloris) holds its connection at most this long. At most `VAULT_REQUEST_TIMEOUT_MS`",
  ),
  requestTimeoutMs: row(
    ["VAULT_REQUEST_TIMEOUT_MS"],
    int(100, 3_600_000, 30_000),
    "time a client has to send a whole request, ms",
    "time a client has to send a whole request, headers and body, ms; then 408 and close (a 1 MiB body on a slow link fits the default)",
  ),
  keepAliveTimeoutMs: row(
    ["VAULT_KEEP_ALIVE_TIMEOUT_MS"],
    int(100, 600_000, 5000),
    "idle keep-alive connections are closed after this, ms",
    "an idle keep-alive connection is closed after this, ms. Behind a proxy that pools connections, set the proxy's idle timeout for upstream connections below this ([deploy.md](deploy.md))",
  ),
  maxConnections: row(
    ["VAULT_MAX_CONNECTIONS"],
    int(1, 1_000_000, 512),
    "open client connections at most; more are closed at once",
    "open client connections at most. At the limit, the connection that has waited longest without complete request headers is closed to make room for a newcomer; with every slot busy the newcomer is closed, except from `127.0.0.1` / `::1`, which keep 8 slots beyond it ([operations.md](operations.md), \"Connections\"; a warning is logged at most every 10 s). 512 stays well below the usual limit of 1024 open files per process, leaving room for the database files, the listening socket and outgoing webhook connections; raise it only with `LimitNOFILE` / `ulimit -n`",
  ),
  maxConnectionsPerIp: row(
    ["VAULT_MAX_CONNECTIONS_PER_IP"],
    int(0, 1_000_000, 64),
    "open connections of one client address at most, 127.0.0.1 and ::1 exempt; more are closed at once; 0: no cap",
    "open connections of one client address at most (IPv6 by its /64); further ones are closed as soon as they are accepted (a warning is logged at most every 10 s). One client holding slow or idle connections then cannot take all of `VAULT_MAX_CONNECTIONS` and keep others, health checks included, out. " +
      "`127.0.0.1` and `::1` are not capped: the local CLI, a health check on the host and a reverse proxy on the same machine connect from there (other `127.x.y.z` addresses are capped). A proxy on another address carries all clients on its one address: set this above the proxy's upstream connections, or `0` (no cap) and let the proxy limit per client ([deploy.md](deploy.md))",
  ),
  // The PostgreSQL engine (docs/scaling.md).
  databaseUrl: row(
    ["VAULT_DATABASE_URL"],
    text("a `postgres://` or `postgresql://` URL", value.postgresUrl, undefined, "none"),
    "postgres://user:pass@host:5432/db selects PostgreSQL (several nodes on one database); unset: SQLite in the data directory",
    "`postgres://user:password@host:5432/database` selects the PostgreSQL engine: several vault nodes on one database ([scaling.md](scaling.md)). The URL's options (`sslmode`, ...) are honoured; its password is never printed. With it, `VAULT_ENCRYPTION_KEY`, `VAULT_MASTER_KEY` and `VAULT_WEBHOOK_SECRET` must be set (shared by every node). Unset: SQLite in `VAULT_DATA_DIR`",
  ),
  databasePoolSize: row(["VAULT_DATABASE_POOL_SIZE"], int(1, 1000, 10), "PostgreSQL connections per node at most", "PostgreSQL connections per node at most"),
  databasePreparedStatements: row(
    ["VAULT_DATABASE_PREPARED_STATEMENTS"],
    flag(true),
    "PostgreSQL: parse the hot-path statements once per connection (false behind a transaction-mode pooler such as PgBouncer < 1.21)",
    "PostgreSQL: run the hot-path statements as named prepared statements, parsed once per connection. `false` behind a pooler in transaction mode that does not track them (PgBouncer before 1.21, or with `max_prepared_statements = 0`)",
  ),
  databaseGroupCommit: row(
    ["VAULT_DATABASE_GROUP_COMMIT"],
    flag(true),
    "PostgreSQL: the requests of one event-loop turn share one transaction and one COMMIT",
    "PostgreSQL: the units of work of one event-loop turn run at once in one transaction (their statements interleaved on one pipelined connection); a unit that asks for an advisory lock, a row lock (`FOR UPDATE`, `FOR SHARE`) or a `SKIP LOCKED` claim before changing anything runs alone after the batch's COMMIT; every answer after the COMMIT; a failed statement rolls the batch back and runs each unit again alone (bounded at 64 units, 4 batches in flight, a lock wait in a batch 20 ms). `false`: one transaction per request ([performance.md](performance.md) \"PostgreSQL\", [scaling.md](scaling.md))",
  ),
  databaseRetryMs: row(
    ["VAULT_DATABASE_RETRY_MS"],
    int(0, 60_000, 5000),
    "PostgreSQL: how long a request whose connection failed before its COMMIT is retried, ms",
    "PostgreSQL: a unit of work whose connection failed before its COMMIT was sent (a failover, a switchover, a restart, a standby not yet promoted) left nothing committed: it runs again on a new connection, with pauses doubling from 25 ms to 500 ms, for at most this long from its first failure, instead of answering 503. One whose COMMIT was sent is never run again (its outcome is unknown): 503. `0`: 503 at once ([scaling.md](scaling.md) \"When the database goes away\")",
  ),
};

/** The command-line flag of a setting: VAULT_DATA_DIR -> "data-dir". */
export function flagName(setting: { flag: string }): string {
  return setting.flag;
}
