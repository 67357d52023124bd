import { join } from "node:path";
import { Command } from "commander";
import { EXIT_OK } from "../exit-codes.js";
import { parseWords } from "../parse-words.js";
import { backupDatabase } from "../../ops/backup.js";
import { macFileOf } from "../../ops/backup-mac.js";
import { formatCounts, processOutput } from "../../ops/common.js";
import { failedWith, keyedSetup } from "./keyed.js";
import type { OpsOutput } from "../../ops/common.js";

/** The flags of `backup` (commander's names). */
export interface BackupFlags {
  dataDir?: string | undefined;
  force?: boolean | undefined;
  encryptionKey?: string | undefined;
}

/** Declares `backup FILE [--data-dir DIR] [--force] [--encryption-key KEY]` on a commander command: arguments, flags, help. */
export function declareBackup(command: Command): Command {
  return command
    .description("write an online, consistent copy of the database (mode 0600), checked, with its row counts")
    .argument("<FILE>", "the copy to write; never replaced unless --force. Its MAC goes to FILE.mac: keep the two together (restore refuses a backup without its MAC)")
    .option("--data-dir <DIR>", "the vault's data directory (default: VAULT_DATA_DIR, then ./.vault)")
    .option("--force", "replace an existing FILE")
    .option("--encryption-key <KEY>", "the root key that MACs the backup (default: VAULT_ENCRYPTION_KEY, else the data dir's encryption.key)")
    .addHelpText(
      "after",
      `
Examples:
  ephemeral-vault backup /backups/vault-$(date -u +%Y%m%dT%H%M%SZ).db --data-dir /var/lib/vault

Exit codes: 0 written and intact, 1 failed (no FILE left), 2 usage error.`,
    );
}

/**
 * `ephemeral-vault backup FILE`: an online, consistent copy of the vault's
 * database while it runs (backupDatabase) and its MAC in FILE.mac, then its
 * integrity and row counts on stdout, progress lines on stderr for large
 * databases. The root key is loaded as `restore` loads it (VAULT_ENCRYPTION_KEY
 * or --encryption-key, else the data dir's encryption.key; docs/operations.md).
 * @returns 0 when the copy is written and intact, 1 when it failed.
 * @throws ConfigError for usage errors and a bad or missing key (exit 2).
 */
export async function runBackup(file: string, flags: BackupFlags, env: Record<string, string | undefined> = process.env, output: OpsOutput = processOutput): Promise<number> {
  const { dataDir, cipher } = keyedSetup(file, "backup needs a FILE to write", flags, env);
  let lastTenth = -1;
  try {
    const report = await backupDatabase(join(dataDir, "vault.db"), file, cipher, {
      force: flags.force === true,
      onProgress: (copied, total) => {
        const tenth = Math.floor((copied / total) * 10);
        if (tenth === lastTenth) return;
        lastTenth = tenth;
        output.err(`backup: ${copied}/${total} pages (${Math.floor((copied / total) * 100)}%)\n`);
      },
    });
    output.out(
      `backup written to ${report.file} (mode 0600) with its MAC in ${macFileOf(report.file)}: ${report.pages} pages, ${report.bytes} bytes, schema version ${report.schemaVersion}, integrity ok\n` +
        formatCounts(report.counts),
    );
    return EXIT_OK;
  } catch (err) {
    return failedWith(err, output, "backup failed");
  }
}

/**
 * runBackup() from the words after `backup`, parsed by commander as the command line does.
 * @returns runBackup()'s code; 0 after --help.
 * @throws ConfigError for a usage error (exit 2).
 */
export async function backupCommand(words: string[], env: Record<string, string | undefined> = process.env, output: OpsOutput = processOutput): Promise<number> {
  const command = declareBackup(new Command("backup"));
  if (parseWords(command, words) === "shown") return EXIT_OK;
  return runBackup(command.processedArgs[0] as string, command.opts<BackupFlags>(), env, output);
}
