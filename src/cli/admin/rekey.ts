import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { EXIT_FAILED, EXIT_OK } from "../exit-codes.js";
import { ConfigError } from "../../config.js";
import { ValueCipher } from "../../crypto/cipher.js";
import { WrongKeyError } from "../../runtime/keyfiles.js";
import { rekeyDatabaseFile } from "../../store/tools.js";
import type { RekeyReport } from "../../store/tools.js";
import { dataDirOf, loadRootKeys, processOutput } from "../../ops/common.js";
import type { OpsOutput, RootKeyFlags } from "../../ops/common.js";
import { fileRootKey, replaceEncryptionKeyFile } from "../../ops/key-file-swap.js";
import { lockDataDir } from "../../store/tools.js";

/** The flags of `rekey` (commander's names). */
export interface RekeyFlags extends RootKeyFlags {
  dataDir?: string | undefined;
}

/** Declares `rekey [--data-dir DIR] [--encryption-key KEY] [--previous-encryption-keys KEYS]`. */
export function declareRekey(command: Command): Command {
  return command
    .description("re-encrypt every stored value under VAULT_ENCRYPTION_KEY (offline: the vault stopped)")
    .option("--data-dir <DIR>", "the vault's data directory (default: VAULT_DATA_DIR, then ./.vault)")
    .option("--encryption-key <KEY>", "the new root key (default: VAULT_ENCRYPTION_KEY, else the data dir's encryption.key)")
    .option("--previous-encryption-keys <KEYS>", "the old root keys, comma-separated (default: VAULT_PREVIOUS_ENCRYPTION_KEYS)")
    .addHelpText(
      "after",
      `
Give the new root key in VAULT_ENCRYPTION_KEY and the old ones in VAULT_PREVIOUS_ENCRYPTION_KEYS.
Afterwards the old keys can be dropped.

Examples:
  VAULT_ENCRYPTION_KEY=$NEW VAULT_PREVIOUS_ENCRYPTION_KEYS=$OLD ephemeral-vault rekey --data-dir /var/lib/vault

Exit codes: 0 nothing left under an old key, 1 some records remain or failed, 2 usage or a vault running there.`,
    );
}

/**
 * `ephemeral-vault rekey`: offline key rotation. With the new root key in
 * VAULT_ENCRYPTION_KEY (or --encryption-key, else the data dir's
 * encryption.key) and the old ones in VAULT_PREVIOUS_ENCRYPTION_KEYS, takes
 * the data-dir lock (refused while the vault runs) and re-encrypts every
 * stored value (rekeyDatabaseFile, store/tools.ts; docs/operations.md).
 * @returns 0 when no value remains under an old key, 1 otherwise.
 * @throws ConfigError for usage errors, a bad or missing key, a running vault
 *   or records needing a key that is not loaded (exit 2).
 */
export async function runRekey(flags: RekeyFlags, env: Record<string, string | undefined> = process.env, output: OpsOutput = processOutput): Promise<number> {
  const dataDir = dataDirOf(flags.dataDir, env);
  const file = join(dataDir, "vault.db");
  if (!existsSync(file)) throw new ConfigError(`no database at ${file}`);
  const keys = loadRootKeys(dataDir, flags, env);
  const cipher = new ValueCipher(keys.root, keys.previous);
  // A generated encryption.key that is not the new key: replaced once the database is rekeyed.
  const inFile = fileRootKey(dataDir);
  const lock = lockDataDir(dataDir, "rekey");
  try {
    let report: RekeyReport;
    try {
      report = rekeyDatabaseFile(file, cipher);
    } catch (err) {
      if (err instanceof WrongKeyError) throw new ConfigError(err.message);
      throw err;
    }
    output.out(
      `rekey: ${report.rewrapped} values rewrapped under key ${cipher.currentKeyId}, ${report.alreadyCurrent} already current, ` +
        `${report.remaining} remaining under old keys` +
        (report.failed > 0 ? `, ${report.failed} did not open (damaged)` : "") +
        "\n",
    );
    if (inFile !== undefined && !inFile.equals(keys.root)) {
      const kept = replaceEncryptionKeyFile(dataDir, inFile, keys.root);
      output.out(
        `encryption.key now holds the new key, so a start without VAULT_ENCRYPTION_KEY opens the database; the old key is kept in ${kept} (mode 0600) for audit verify of older rows: remove it once you no longer need it\n`,
      );
    }
    if (report.remaining === 0) {
      output.out("every value is under the current key: VAULT_PREVIOUS_ENCRYPTION_KEYS can be dropped\n");
      return EXIT_OK;
    }
    return EXIT_FAILED;
  } finally {
    lock.release();
  }
}
