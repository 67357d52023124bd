import { SETTINGS } from "./config/settings.js";

// The settings: every setting's row (variable, flag, default, values, help)
// in config/settings.ts, loadConfig in config/load.ts, the value kinds in
// config/values.ts, the help and docs/configuration.md's table rendered in
// config/render.ts (docs/configuration.md).

export type { Config } from "./config/types.js";
export { ConfigError } from "./config/types.js";
export { SETTINGS, defaultPublicUrl, flagName } from "./config/settings.js";
export type { Setting } from "./config/setting.js";
export { loadConfig } from "./config/load.js";

// The defaults some components and tests name, read from the table (their only home).

/** Default of VAULT_HEADERS_TIMEOUT_MS, milliseconds. */
export const DEFAULT_HEADERS_TIMEOUT_MS = SETTINGS.headersTimeoutMs.default;
/** Default of VAULT_REQUEST_TIMEOUT_MS, milliseconds. */
export const DEFAULT_REQUEST_TIMEOUT_MS = SETTINGS.requestTimeoutMs.default;
/** Default of VAULT_KEEP_ALIVE_TIMEOUT_MS, milliseconds. */
export const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = SETTINGS.keepAliveTimeoutMs.default;
/** Default of VAULT_MAX_CONNECTIONS. */
export const DEFAULT_MAX_CONNECTIONS = SETTINGS.maxConnections.default;
/** Default of VAULT_MAX_CONNECTIONS_PER_IP. */
export const DEFAULT_MAX_CONNECTIONS_PER_IP = SETTINGS.maxConnectionsPerIp.default;
/** Default of VAULT_WEBHOOKS_PER_SCOPE. */
export const DEFAULT_WEBHOOKS_PER_SCOPE = SETTINGS.webhooksPerScope.default;
/** Default of VAULT_WEBHOOK_FAILING_AFTER. */
export const DEFAULT_WEBHOOK_FAILING_AFTER = SETTINGS.webhookFailingAfter.default;
/** Default of VAULT_WEBHOOK_SCOPE_CONCURRENCY: delivery slots of one scope (of the worker's 8). */
export const DEFAULT_WEBHOOK_SCOPE_CONCURRENCY = SETTINGS.webhookScopeConcurrency.default;
/** Default of VAULT_AUTH_FAIL_LIMIT: failed authentications per remote ip per window before 429 (20). */
export const DEFAULT_AUTH_FAIL_LIMIT = SETTINGS.authFailLimit.default;
/** Default of VAULT_AUTH_FAIL_WINDOW_MS, milliseconds. */
export const DEFAULT_AUTH_FAIL_WINDOW_MS = SETTINGS.authFailWindowMs.default;
/** Default of VAULT_SHARE_ANONYMOUS_PER_MINUTE. */
export const DEFAULT_SHARE_ANONYMOUS_PER_MINUTE = SETTINGS.shareAnonymousPerMinute.default;
/** VAULT_MAX_FILE_BYTES' default: 10 MiB (docs/share.md, "Files"). */
export const DEFAULT_MAX_FILE_BYTES = SETTINGS.maxFileBytes.default;
