import { SETTINGS } from "./settings.js";
import type { Setting } from "./setting.js";
import { ConfigError } from "./types.js";
import type { Config } from "./types.js";
import type { Raw } from "./values.js";

/**
 * Builds the Config from command-line flags and the environment, one row of
 * the settings table (settings.ts) per field: the flag wins, then the first
 * non-empty variable of the row (an empty variable counts as unset), else
 * the row's default (docs/configuration.md). Then the rules between
 * settings: the headers timeout at most the request timeout, the keys
 * every node of one PostgreSQL database shares, and the TLS pair (both files
 * or neither; ACME or files, not both; ACME with the redirect port; the
 * redirect port only with TLS, and not the TLS port).
 * Defaults derived from other settings (the public URL) are resolved last.
 * Writes nothing and touches no file (the TLS files are read by the server).
 *
 * @param flags the serve command's flags by name without dashes
 *   (`{"data-dir": "/x", "trust-proxy": true}`); a bare boolean flag is `true`.
 * @param env usually process.env.
 * @returns every field resolved: components apply no defaults of their own.
 * @throws ConfigError with one line naming the bad setting's variable.
 */
export function loadConfig(flags: Record<string, string | boolean | undefined>, env: Record<string, string | undefined>): Config {
  const out: Partial<Config> = {};
  const rawOf = (setting: Setting<unknown>): Raw | undefined => {
    const given = flags[setting.flag];
    if (given !== undefined) return given;
    for (const name of setting.env) {
      const text = env[name];
      if (text !== undefined && text !== "") return text;
    }
    return undefined;
  };
  const derived: (keyof Config)[] = [];
  const resolve = <K extends keyof Config>(field: K): void => {
    const setting: Setting<Config[K]> = SETTINGS[field];
    const raw = rawOf(setting);
    if (raw !== undefined) out[field] = setting.parse(raw, setting.env[0] ?? field);
    else if (setting.derive !== undefined) derived.push(field);
    else out[field] = setting.default;
  };
  for (const field of Object.keys(SETTINGS) as (keyof Config)[]) resolve(field);
  // Derived defaults last: they read settings that come after them in the table (VAULT_TLS_CERT).
  const from = { host: out.host ?? "", port: out.port ?? 0, tls: out.tlsCert !== undefined || out.acmeDomains !== undefined, domain: out.acmeDomains?.[0] };
  for (const field of derived) (out as Record<string, unknown>)[field] = SETTINGS[field].derive?.(from);
  const config = out as Config;
  checkTogether(config);
  return config;
}

/** The rules between settings. @throws ConfigError naming the setting. */
function checkTogether(config: Config): void {
  if (config.headersTimeoutMs > config.requestTimeoutMs) {
    throw new ConfigError("VAULT_HEADERS_TIMEOUT_MS must not be larger than VAULT_REQUEST_TIMEOUT_MS");
  }
  if ((config.tlsCert === undefined) !== (config.tlsKey === undefined)) {
    const [given, missing] = config.tlsCert === undefined ? ["VAULT_TLS_KEY", "VAULT_TLS_CERT"] : ["VAULT_TLS_CERT", "VAULT_TLS_KEY"];
    throw new ConfigError(`${missing} must be set with ${given}: TLS needs both the certificate and its private key (docs/configuration.md "HTTPS")`);
  }
  if (config.acmeDomains !== undefined) {
    if (config.tlsCert !== undefined) throw new ConfigError("VAULT_ACME_DOMAINS and VAULT_TLS_CERT exclude each other: the certificate comes from ACME or from files");
    if (config.dataDir === ":memory:") throw new ConfigError("VAULT_ACME_DOMAINS needs a data dir on disk: the account key and the certificate are kept there");
    if (config.httpRedirectPort === undefined) {
      throw new ConfigError('VAULT_ACME_DOMAINS needs VAULT_HTTP_REDIRECT_PORT: the ACME HTTP-01 challenge is answered there (usually 80; docs/deploy.md "Certificates by ACME")');
    }
  }
  if (config.httpRedirectPort !== undefined) {
    if (config.tlsCert === undefined && config.acmeDomains === undefined) {
      throw new ConfigError("VAULT_HTTP_REDIRECT_PORT needs VAULT_TLS_CERT and VAULT_TLS_KEY, or VAULT_ACME_DOMAINS: it redirects to the HTTPS listener");
    }
    if (config.httpRedirectPort !== 0 && config.httpRedirectPort === config.port) {
      throw new ConfigError(`VAULT_HTTP_REDIRECT_PORT must differ from VAULT_PORT (${config.port})`);
    }
  }
  if (config.oidcClientSecret !== undefined && config.oidcClientSecretFile !== undefined) {
    throw new ConfigError("VAULT_OIDC_CLIENT_SECRET and VAULT_OIDC_CLIENT_SECRET_FILE must not both be set");
  }
  if (config.oidcIssuer !== undefined) {
    for (const [value, name] of [
      [config.oidcClientId, "VAULT_OIDC_CLIENT_ID"],
      [config.oidcOrg, "VAULT_OIDC_ORG"],
      [config.oidcRoleMap.length === 0 ? undefined : config.oidcRoleMap, "VAULT_OIDC_ROLE_MAP"],
    ] as const) {
      if (value === undefined) throw new ConfigError(`${name} must be set with VAULT_OIDC_ISSUER (docs/sso.md "Setup")`);
    }
  }
  if (config.databaseUrl === undefined) return;
  // Nodes of one database share these; a node must never generate its own.
  for (const [value, name] of [
    [config.encryptionKey, "VAULT_ENCRYPTION_KEY"],
    [config.masterKey, "VAULT_MASTER_KEY"],
    [config.webhookSecret, "VAULT_WEBHOOK_SECRET"],
  ] as const) {
    if (value === undefined) throw new ConfigError(`${name} must be set with VAULT_DATABASE_URL: every node of one database shares it`);
  }
}
