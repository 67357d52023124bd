import { Command } from "commander";
import { EXIT_OK } from "../exit-codes.js";
import { parseWords } from "../parse-words.js";
import { formatCounts, processOutput } from "../../ops/common.js";
import { failedWith, keyedSetup } from "./keyed.js";
import type { OpsOutput, RootKeyFlags } from "../../ops/common.js";
import { restoreDatabase } from "../../ops/restore.js";

/** The flags of `restore` (commander's names). */
export interface RestoreFlags extends RootKeyFlags {
  dataDir?: string | undefined;
  unauthenticated?: boolean | undefined;
  older?: boolean | undefined;
}

/** Declares `restore FILE [--data-dir DIR] [--encryption-key KEY] [--previous-encryption-keys KEYS] [--unauthenticated] [--older]`. */
export function declareRestore(command: Command): Command {
  return command
    .description("replace the database with a checked backup (the vault stopped); the old one is kept beside it")
    .argument("<FILE>", "a backup written by `ephemeral-vault backup`, with its MAC in FILE.mac")
    .option("--data-dir <DIR>", "the vault's data directory (default: VAULT_DATA_DIR, then ./.vault)")
    .option("--encryption-key <KEY>", "the root key (default: VAULT_ENCRYPTION_KEY, else the data dir's encryption.key)")
    .option("--previous-encryption-keys <KEYS>", "older root keys, comma-separated (default: VAULT_PREVIOUS_ENCRYPTION_KEYS)")
    .option("--unauthenticated", "accept a backup without FILE.mac (made by an older ephemeral-vault); a FILE.mac that does not match is always refused")
    .option("--older", "restore a backup older than the database it replaces (its audit log lacks the current head): brings back keys revoked and secrets deleted since")
    .addHelpText(
      "after",
      `
The configured encryption key must verify the MAC and open the backup. Schema
objects the vault does not define and a broken audit chain are refused, and so
is a backup older than the current database (its audit log does not hold the
current audit head) unless --older is given.

Examples:
  VAULT_ENCRYPTION_KEY=$KEY ephemeral-vault restore /backups/vault-20261123T221530Z.db --data-dir /var/lib/vault

Exit codes: 0 restored, 1 refused (MAC, integrity, schema, audit chain, key, older; nothing replaced), 2 usage or a vault running there.`,
    );
}

/**
 * `ephemeral-vault restore FILE`: replaces the data dir's database with a
 * backup (restoreDatabase), offline. `--unauthenticated` accepts a backup
 * without its MAC file (one made by an ephemeral-vault that did not write
 * one), with a warning on stderr; every other check still runs. A backup
 * older than the current database is refused unless `--older`
 * (docs/operations.md, "Backups").
 * @returns 0 when restored, 1 (EXIT_FAILED) when the file was refused or the
 *   restore failed (nothing replaced).
 * @throws ConfigError for usage errors, a bad key setting or a running vault (exit 2).
 */
export async function runRestore(file: string, flags: RestoreFlags, env: Record<string, string | undefined> = process.env, output: OpsOutput = processOutput): Promise<number> {
  const { dataDir, cipher } = keyedSetup(file, "restore needs a backup FILE", flags, env);
  try {
    const report = await restoreDatabase(file, dataDir, cipher, { unauthenticated: flags.unauthenticated === true, older: flags.older === true });
    if (report.authentication === "unauthenticated") {
      output.err(`ephemeral-vault: warning: ${file} was not authenticated (no ${file}.mac; --unauthenticated): its schema and audit chain were checked, its data can only be trusted as far as its storage\n`);
    }
    output.out(
      `restored ${file} into ${report.database}` +
        (report.previous === null ? "" : `; the previous database is kept at ${report.previous}`) +
        "\n" +
        formatCounts(report.counts),
    );
    return EXIT_OK;
  } catch (err) {
    return failedWith(err, output, "restore refused", "; nothing was replaced");
  }
}

/**
 * runRestore() from the words after `restore`, parsed by commander as the command line does.
 * @returns runRestore()'s code; 0 after --help.
 * @throws ConfigError for a usage error (exit 2).
 */
export async function restoreCommand(words: string[], env: Record<string, string | undefined> = process.env, output: OpsOutput = processOutput): Promise<number> {
  const command = declareRestore(new Command("restore"));
  if (parseWords(command, words) === "shown") return EXIT_OK;
  return runRestore(command.processedArgs[0] as string, command.opts<RestoreFlags>(), env, output);
}
