import { existsSync } from "node:fs";
import { join } from "node:path";
import { ConfigError } from "../config.js";
import {
  latestSqliteSchemaVersion,
  MIGRATED_TABLES,
  openMigrationSource,
  openMigrationTarget,
  redactCredentials,
  redactUrl,
} from "../store/tools.js";
import type { CopyCounts, MigrationTarget } from "../store/tools.js";
import { lockDataDir } from "../store/tools.js";

export type { CopyCounts };

/**
 * `ephemeral-vault migrate --from-sqlite DIR --to postgres://...`: copies a
 * SQLite vault (stopped) into an empty PostgreSQL database, in one
 * PostgreSQL transaction: every row with its id, ciphertexts byte for byte
 * (they stay sealed to the same root keys and AAD), the audit log as the
 * chain `sqlite` with its hashes unchanged (seq = the SQLite id, so the
 * chain and its key segments verify as they did), and the meta rows (root
 * key record, chain segments). Then compares the row counts of every table.
 *
 * The data dir's lock (store/sqlite/tools/lock.ts) is held from before the SQLite file is
 * opened until the copy has ended, so no vault can serve the data dir
 * meanwhile: a secret burned or written there after the copy would be
 * served again, or lost, on PostgreSQL (docs/scaling.md, "Moving a SQLite
 * vault"). The columns copied are this build's schema's, never the file's
 * own names, and every identifier is quoted (the SQLite side:
 * store/sqlite/tools/migrate-source.ts; the PostgreSQL side:
 * store/pg/tools/migrate.ts).
 * @returns the counts per table.
 * @throws ConfigError (exit 2) for a missing or unmigrated SQLite database,
 *   a data dir a running vault holds, a table whose columns do not match the
 *   schema, a database that cannot be reached, a non-empty target, or counts
 *   that differ (the copy is then rolled back).
 */
export async function migrateFromSqlite(options: { dataDir: string; url: string; progress?: (line: string) => void }): Promise<CopyCounts> {
  const file = join(options.dataDir, "vault.db");
  if (!existsSync(file)) throw new ConfigError(`no database at ${file}`);
  const lock = lockDataDir(options.dataDir, "migrate");
  try {
    const source = openMigrationSource(file);
    try {
      const version = source.schemaVersion;
      if (version !== latestSqliteSchemaVersion()) {
        throw new ConfigError(`${file} has schema version ${version}; start this ephemeral-vault on it once (it migrates), stop it, then copy`);
      }
      if (source.holdsReadsToReplay()) {
        throw new ConfigError(`${file} holds reads its secrets' rows do not count yet (the vault did not stop cleanly); start this ephemeral-vault on it once (it counts them), stop it, then copy`);
      }
      source.checkColumns(MIGRATED_TABLES);
      let target: MigrationTarget;
      try {
        target = await openMigrationTarget(options.url);
      } catch (err) {
        throw new ConfigError(`--to ${redactUrl(options.url)}: ${redactCredentials((err as Error).message, options.url)}`);
      }
      try {
        return await target.copyFrom(source, options.progress ?? (() => {}));
      } finally {
        await target.end();
      }
    } finally {
      source.close();
    }
  } finally {
    lock.release();
  }
}
