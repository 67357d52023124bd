import { VaultClient } from "@ephemeral-vault/client";
import type { Config } from "../config.js";
import { ConfigError, SETTINGS, loadConfig } from "../config.js";
import { createLogger } from "../log/log.js";
import type { Logger } from "../log/log.js";
import { startServer } from "./server.js";

/**
 * Every setting of docs/configuration.md by its Config field name, with its
 * type: `sweepIntervalMs: 250`, `shareAnonymous: true`. The root keys may be
 * given as a Buffer of 32 bytes or as their text (64 hex characters, or
 * base64), as in VAULT_ENCRYPTION_KEY.
 */
export type VaultSettings = {
  [K in keyof Config]?: K extends "encryptionKey"
    ? Buffer | string
    : K extends "previousEncryptionKeys"
      ? (Buffer | string)[]
      : Exclude<Config[K], undefined>;
};

/** What `startVault` takes; every field is optional. */
export interface StartVaultOptions {
  /** A data directory (created 0700 when missing), or ":memory:" (the default: nothing on disk). */
  dataDir?: string | undefined;
  /** TCP port on 127.0.0.1 (or `settings.host`); default 0: a free one. */
  port?: number | undefined;
  /** Master bearer token, 16+ characters; default: the data dir's key file, else generated. */
  masterKey?: string | undefined;
  /** Any other setting, by name; validated as the same setting given as a flag. */
  settings?: VaultSettings | undefined;
  /** A pino logger to log to; default JSON lines on stderr at `settings.logLevel` (default "warn"). */
  logger?: Logger | undefined;
}

/** A vault started in this process. */
export interface EmbeddedVault {
  /** Where it listens, e.g. http://127.0.0.1:40123 (no trailing slash). */
  url: string;
  /** The master key: a bearer token for every route. */
  token: string;
  /** A VaultClient pointed at `url` with `token` (global secrets, whatever VAULT_ORG says). */
  client: VaultClient;
  /**
   * The app in process, no socket (Hono's `app.fetch`). A string or URL is
   * resolved against `url`: `vault.fetch("/health")`.
   */
  fetch: (input: Request | string | URL, init?: RequestInit) => Promise<Response>;
  /**
   * Stops it: the listener (in-flight requests finish, 4 s at most), the
   * sweeper, the webhook worker and every timer; commits what is pending and
   * closes the database. Resolves once all is flushed; calling it again
   * returns the same promise.
   */
  close: () => Promise<void>;
}

/**
 * Turns a typed setting into the text its flag takes, so that one validation
 * (the settings table's, config/settings.ts) covers flags, the environment
 * and embedding.
 * @throws ConfigError for a value of the wrong type.
 */
function flagValue(field: string, value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "boolean" || typeof value === "number") return String(value);
  if (Buffer.isBuffer(value)) return value.toString("hex");
  if (Array.isArray(value)) return value.map((item) => flagValue(field, item)).join(",");
  throw new ConfigError(`setting ${field}: unsupported value of type ${typeof value}`);
}

/**
 * The Config of an embedded vault: each setting mapped through its row of
 * the settings table (config/settings.ts) to its flag, over an empty
 * environment (process.env is not read: no process-wide state), with the
 * embedding defaults (":memory:", port 0, log level warn) under them
 * (docs/embedding.md). A name is a setting only when the table has a row of
 * its own for it (not `constructor` or `toString`).
 * @throws ConfigError naming the setting (its variable) for a bad value or an unknown name.
 */
export function embeddedConfig(options: StartVaultOptions = {}): Config {
  const settings: Record<string, unknown> = { dataDir: ":memory:", port: 0, logLevel: "warn", ...options.settings };
  if (options.dataDir !== undefined) settings.dataDir = options.dataDir;
  if (options.port !== undefined) settings.port = options.port;
  if (options.masterKey !== undefined) settings.masterKey = options.masterKey;
  const flags: Record<string, string> = {};
  for (const [field, value] of Object.entries(settings)) {
    if (!Object.hasOwn(SETTINGS, field)) throw new ConfigError(`unknown setting ${field} (docs/configuration.md lists them)`);
    if (value === undefined) continue;
    flags[SETTINGS[field as keyof Config].flag] = flagValue(field, value);
  }
  return loadConfig(flags, {});
}

/**
 * Starts a vault in this process, for tests and dev scripts
 * (docs/embedding.md): by default an in-memory database, a free port on
 * 127.0.0.1 and a generated master key; quiet (no banner, logs at warn on
 * stderr). Two vaults in one process share nothing: own data, keys,
 * metrics registry and timers. Nothing is left running after `close()`.
 *
 * @throws ConfigError for a bad or unknown setting (the message names its
 *   variable, as docs/configuration.md), a data dir in use by another vault,
 *   or a port that cannot be used.
 */
export async function startVault(options: StartVaultOptions = {}): Promise<EmbeddedVault> {
  const config = embeddedConfig(options);
  const log = options.logger ?? createLogger(config.logLevel, { write: (line: string) => void process.stderr.write(line) });
  // Generated keys are returned (token), not announced.
  const server = await startServer(config, log, () => {}, { processMetrics: false, quietStart: true });
  const url = server.url;
  return {
    url,
    token: server.masterKey,
    client: new VaultClient({ addr: url, token: server.masterKey, org: null }),
    fetch: (input, init) => server.fetch(input instanceof Request && init === undefined ? input : new Request(toUrl(input, url), init)),
    close: server.stop,
  };
}

function toUrl(input: Request | string | URL, base: string): string | Request {
  if (input instanceof Request) return input;
  return new URL(input, base).toString();
}
