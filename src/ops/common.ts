import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError, loadConfig, SETTINGS } from "../config.js";
import { parseRootKey, ValueCipher } from "../crypto/cipher.js";
import type { VaultCounts } from "../store/tools.js";

export type { VaultCounts };

/** Where a command writes: stdout and stderr by default, strings in tests. */
export interface OpsOutput {
  out: (text: string) => void;
  err: (text: string) => void;
}

/** The process's stdout and stderr. */
export const processOutput: OpsOutput = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
};

/** The root-key flags an operator command may take (`--encryption-key`, `--previous-encryption-keys`). */
export interface RootKeyFlags {
  encryptionKey?: string | undefined;
  previousEncryptionKeys?: string | undefined;
}

/**
 * The data dir of an operator command: --data-dir, else VAULT_DATA_DIR, else
 * ./.vault (docs/configuration.md).
 * @param flag the `--data-dir` value, if given.
 * @throws ConfigError for `:memory:`, which has nothing to back up or restore.
 */
export function dataDirOf(flag: string | undefined, env: Record<string, string | undefined>): string {
  const dir = flag ?? (env.VAULT_DATA_DIR || SETTINGS.dataDir.default);
  if (dir === ":memory:") throw new ConfigError("--data-dir must name a directory, not :memory:");
  return dir;
}

/**
 * The root keys a command opens records with, as the server would load them,
 * but never generating one: VAULT_ENCRYPTION_KEY (or --encryption-key), else
 * the data dir's encryption.key; plus VAULT_PREVIOUS_ENCRYPTION_KEYS (or
 * --previous-encryption-keys).
 * @throws ConfigError when a key is malformed or none is configured.
 */
export function loadCipher(dataDir: string, flags: RootKeyFlags, env: Record<string, string | undefined>): ValueCipher {
  const keys = loadRootKeys(dataDir, flags, env);
  return new ValueCipher(keys.root, keys.previous);
}

/**
 * The root keys of loadCipher(), as bytes: the current one (32 bytes) and
 * the previous ones. The flags and variables are read by loadConfig, so they
 * are validated as the server validates them.
 * @throws ConfigError as loadCipher().
 */
export function loadRootKeys(dataDir: string, flags: RootKeyFlags, env: Record<string, string | undefined>): { root: Buffer; previous: Buffer[] } {
  const config = loadConfig(
    { "encryption-key": flags.encryptionKey, "previous-encryption-keys": flags.previousEncryptionKeys },
    { ...env, VAULT_DATA_DIR: dataDir },
  );
  let root = config.encryptionKey;
  if (root === undefined) {
    const file = join(dataDir, "encryption.key");
    if (!existsSync(file)) {
      throw new ConfigError(`no encryption key: set VAULT_ENCRYPTION_KEY (or --encryption-key), or put encryption.key in ${dataDir}`);
    }
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      throw new ConfigError(`${file} cannot be read (encryption key)`);
    }
    root = parseRootKey(text);
    if (root === undefined) throw new ConfigError(`${file} is not 64 hex characters or base64 of 32 bytes`);
  }
  return { root, previous: config.previousEncryptionKeys };
}

/** The counts as two human-readable lines. */
export function formatCounts(c: VaultCounts): string {
  return (
    `secrets: ${c.secrets.active} active, ${c.secrets.sealed} sealed, ${c.secrets.expired} expired\n` +
    `scoped keys: ${c.scopedKeys}, principal keys: ${c.principalKeys}, orgs: ${c.orgs}, principals: ${c.principals}, ` +
    `audit rows: ${c.auditRows}, webhooks: ${c.webhooks}\n`
  );
}

/** A UTC timestamp for file names: 20261123T221530Z. */
export function fileStamp(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z");
}
