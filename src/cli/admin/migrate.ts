import type { Command } from "commander";
import { EXIT_OK } from "../exit-codes.js";
import { ConfigError } from "../../config.js";
import { redactUrl } from "../../store/tools.js";
import { migrateFromSqlite } from "../../ops/migrate-to-pg.js";

/** The flags of `migrate` (commander's names). */
export interface MigrateFlags {
  fromSqlite?: string | undefined;
  to?: string | undefined;
}

/** Declares `migrate --from-sqlite DIR --to postgres://...`. */
export function declareMigrate(command: Command): Command {
  return command
    .description("copy a stopped SQLite vault into an empty PostgreSQL database, then compare row counts")
    .option("--from-sqlite <DIR>", "the data directory of the SQLite vault (stopped)")
    .option("--to <URL>", "postgres://user:password@host:5432/database (empty; the schema is created)")
    .addHelpText(
      "after",
      `
Everything is copied in one transaction: ciphertexts as they are (keep the same
VAULT_ENCRYPTION_KEY), the audit log as the chain "sqlite" with its hashes, ids kept.

Examples:
  ephemeral-vault migrate --from-sqlite /var/lib/vault --to postgres://vault:secret@db:5432/vault

Exit codes: 0 copied and counts equal, 2 usage, unreachable database, non-empty target or a count mismatch (nothing kept).`,
    );
}

/**
 * `ephemeral-vault migrate --from-sqlite DIR --to URL` (ops/migrate-to-pg.ts,
 * docs/scaling.md). Prints one line per table and a summary; never prints
 * the URL's password.
 * @returns 0 when every table's count matches.
 * @throws ConfigError for usage errors and refused copies (exit 2).
 */
export async function runMigrate(flags: MigrateFlags, out: (line: string) => void = (line) => process.stdout.write(`${line}\n`)): Promise<number> {
  const dataDir = flags.fromSqlite;
  const url = flags.to;
  if (dataDir === undefined || url === undefined) throw new ConfigError("migrate needs --from-sqlite DIR and --to postgres://...");
  const counts = await migrateFromSqlite({ dataDir, url, progress: out });
  const total = Object.values(counts).reduce((n, c) => n + c.postgres, 0);
  out(`copied ${total} rows from ${dataDir} to ${redactUrl(url)}; every table's count matches`);
  return EXIT_OK;
}
