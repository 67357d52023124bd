import { WrongKeyError } from "../model/engine-errors.js";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync, chmodSync, accessSync, constants } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { Config } from "../config.js";
import { ConfigError } from "../config.js";
import { generateRootKey, parseRootKey } from "../crypto/cipher.js";
import { randomSecret } from "../crypto/tokens.js";

/** The secrets the server runs with, from settings or the data dir's key files. */
export interface KeyMaterial {
  masterKey: string;
  rootKey: Buffer;
  previousRootKeys: Buffer[];
  webhookSecret: string;
}

/** Messages for the operator, written once to stderr (never to the log). */
export type Notice = (line: string) => void;

/**
 * Checks the data directory and creates it (mode 0700) when missing.
 * @throws ConfigError when the path is not a directory or not writable.
 */
export function prepareDataDir(dir: string): void {
  if (existsSync(dir)) {
    if (!statSync(dir).isDirectory()) throw new ConfigError(`VAULT_DATA_DIR ${dir} is not a directory`);
    try {
      accessSync(dir, constants.R_OK | constants.W_OK | constants.X_OK);
    } catch {
      throw new ConfigError(`VAULT_DATA_DIR ${dir} is not readable and writable`);
    }
    return;
  }
  try {
    makeDirs(dir);
  } catch (err) {
    throw new ConfigError(`VAULT_DATA_DIR ${dir} cannot be created: ${(err as NodeJS.ErrnoException).code ?? "error"}`);
  }
}

/**
 * mkdir -p, mode 0700, one level at a time from the nearest existing
 * ancestor: Node's recursive mkdirSync never returns under some virtual
 * file systems (a path in /proc loops forever), which would hang the start
 * instead of refusing it.
 * @throws the first mkdir error (ENOENT, ENOTDIR, EACCES, ...).
 */
function makeDirs(dir: string): void {
  const missing: string[] = [];
  let current = resolve(dir);
  while (!existsSync(current)) {
    missing.unshift(current);
    const parent = dirname(current);
    if (parent === current) break;
    current = parent;
  }
  for (const path of missing) mkdirSync(path, { mode: 0o700 });
}

/**
 * Resolves the master key, the encryption root key and the webhook secret
 * (docs/contract.md §3): a setting wins; else the key file in the data
 * dir; else a new one is generated, written with mode 0600, and announced
 * once through `notice`. With `:memory:` nothing is written.
 * @throws ConfigError when a key file exists but is malformed, unreadable,
 *   or accessible by group or others (mode not 0600 or stricter).
 */
export function loadKeyMaterial(config: Config, notice: Notice): KeyMaterial {
  const inMemory = config.dataDir === ":memory:";
  const file = (name: string) => join(config.dataDir, name);

  let masterKey = config.masterKey;
  if (masterKey === undefined) {
    const stored = inMemory ? undefined : readKeyFile(file("master.key"), "master key");
    if (stored !== undefined) {
      if (stored.length < 16) throw new ConfigError(`${file("master.key")} holds a master key shorter than 16 characters`);
      masterKey = stored;
    } else {
      masterKey = randomSecret();
      if (!inMemory) writeKeyFile(file("master.key"), masterKey);
      notice(
        `ephemeral-vault: generated a master key${inMemory ? "" : ` (saved in ${file("master.key")})`}; it is shown only now:`,
      );
      notice(`  VAULT_MASTER_KEY=${masterKey}`);
    }
  }

  let rootKey = config.encryptionKey;
  if (rootKey === undefined) {
    const stored = inMemory ? undefined : readKeyFile(file("encryption.key"), "encryption key");
    if (stored !== undefined) {
      rootKey = parseRootKey(stored);
      if (rootKey === undefined) throw new ConfigError(`${file("encryption.key")} is not 64 hex characters or base64 of 32 bytes`);
    } else {
      rootKey = generateRootKey();
      if (!inMemory) {
        writeKeyFile(file("encryption.key"), rootKey.toString("hex"));
        notice(
          `ephemeral-vault: warning: generated an encryption key in ${file("encryption.key")}, beside the data it protects; for production set VAULT_ENCRYPTION_KEY from a secret store and keep a copy elsewhere`,
        );
      }
    }
  }

  let webhookSecret = config.webhookSecret;
  if (webhookSecret === undefined) {
    const stored = inMemory ? undefined : readKeyFile(file("webhook.secret"), "webhook secret");
    if (stored !== undefined) {
      webhookSecret = stored;
    } else {
      webhookSecret = randomSecret();
      if (!inMemory) writeKeyFile(file("webhook.secret"), webhookSecret);
      notice(`ephemeral-vault: generated a webhook signing secret; it is shown only now:`);
      notice(`  VAULT_WEBHOOK_SECRET=${webhookSecret}`);
    }
  }

  return { masterKey, rootKey, previousRootKeys: config.previousEncryptionKeys, webhookSecret };
}

/**
 * Reads a key file, refusing one that other users could read (as ssh
 * refuses a private key with open permissions): a group or other bit set in
 * its mode stops the start with a message naming the file and `chmod 600`.
 * @throws ConfigError for open permissions, an empty or unreadable file.
 */
function readKeyFile(path: string, what: string): string | undefined {
  if (!existsSync(path)) return undefined;
  const mode = statSync(path).mode & 0o777;
  if ((mode & 0o077) !== 0) {
    throw new ConfigError(
      `${path} (${what}) is accessible by group or others (mode 0${mode.toString(8)}); run: chmod 600 ${path}`,
    );
  }
  try {
    const text = readFileSync(path, "utf8").trim();
    if (text === "") throw new ConfigError(`${path} is empty; delete it to generate a new ${what}`);
    return text;
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError(`${path} cannot be read (${what})`);
  }
}

function writeKeyFile(path: string, content: string): void {
  writeFileSync(path, content + "\n", { mode: 0o600, flag: "wx" });
  chmodSync(path, 0o600);
}

export { WrongKeyError };

