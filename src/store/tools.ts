/*
 * The offline tools' way to the database (docs/operations.md "Backups" and
 * "Rotating the root key", docs/audit.md, docs/scaling.md "Moving a SQLite
 * vault"): backup, restore checks, rekey, audit verify and anchor, the copy
 * from SQLite to PostgreSQL. src/ops and src/cli use this module and never
 * an engine; the engine parts are store/sqlite/tools/ and store/pg/tools/.
 * The PostgreSQL parts are loaded only when called, so a SQLite vault never
 * imports `pg`.
 */
import type { ValueCipher } from "../crypto/cipher.js";
import type { CopyFacts, MigrationTarget, PgAuditLog, RekeyReport, VaultCounts } from "./tool-shapes.js";
import { checkRestoreCopy, copyWithBackupApi, inspectCopy, mergeWal, snapshotInto } from "./sqlite/tools/backup.js";
import type { SnapshotOptions } from "./sqlite/tools/backup.js";
import { openAuditLog } from "./sqlite/tools/audit.js";
import { LOCK_FILE, lockDataDir } from "./sqlite/tools/lock.js";
import { openMigrationSource } from "./sqlite/tools/migrate-source.js";
import { rekeyFile } from "./sqlite/tools/rekey.js";
import { latestSchemaVersion } from "./sqlite/migrate.js";
import { SQLITE_CHAIN } from "./pg/audit/verify.js";
import type { PgChainReport } from "./pg/audit/verify.js";
import { redactCredentials, redactUrl } from "./pg/redact.js";

export { MIGRATED_TABLES, RestoreRefused } from "./tool-shapes.js";
export type {
  AuditSnapshot,
  CopyCounts,
  CopyFacts,
  DataDirLock,
  MigrationSource,
  MigrationTarget,
  PgAuditLog,
  RekeyReport,
  SqliteAuditLog,
  VaultCounts,
} from "./tool-shapes.js";
export type { PgChainReport, SnapshotOptions };
export { LOCK_FILE, lockDataDir, openMigrationSource, redactCredentials, redactUrl, SQLITE_CHAIN };

/**
 * The newest schema version of a SQLite vault this build knows (schema.sql).
 * @returns a positive integer.
 */
export function latestSqliteSchemaVersion(): number {
  return latestSchemaVersion();
}

/**
 * A consistent online copy of the SQLite database at `source` into `dest`
 * (store/sqlite/tools/backup.ts snapshotInto).
 * @throws the driver's error when the source cannot be read.
 */
export function snapshotDatabase(source: string, dest: string, options: SnapshotOptions): Promise<void> {
  return snapshotInto(source, dest, options);
}

/**
 * Checks a backup copy (rollback journal, key ids handed to `checkKeys`,
 * integrity check; store/sqlite/tools/backup.ts inspectCopy).
 * @returns its size, schema version and row counts.
 * @throws what `checkKeys` throws; Error when the copy fails its integrity check.
 */
export function inspectBackupCopy(file: string, checkKeys: (rootKeyIds: string[]) => void): CopyFacts {
  return inspectCopy(file, checkKeys);
}

/**
 * Checks a restore's copy before it replaces anything (integrity, schema
 * objects, keys, audit chain; against `current`, the database it would
 * replace, when given: not older unless `older`).
 * @returns the copy's row counts.
 * @throws RestoreRefused naming the first problem.
 */
export function checkRestoreFile(file: string, cipher: ValueCipher, current: string | undefined, older: boolean): VaultCounts {
  return checkRestoreCopy(file, cipher, current, older);
}

/**
 * Copies a database file (and its -wal, when there is one) with SQLite's backup API.
 * @throws RestoreRefused when it cannot be opened or read as a database.
 */
export function copyDatabaseFile(file: string, temp: string): Promise<void> {
  return copyWithBackupApi(file, temp);
}

/**
 * Makes the database at `file` one self-contained file (WAL merged, rollback journal).
 * @returns false when it cannot be opened or switched.
 */
export function mergeDatabaseWal(file: string): boolean {
  return mergeWal(file);
}

/**
 * Re-encrypts every stored value of the database file `file` under the
 * current root key (store/sqlite/tools/rekey.ts rekeyDatabase).
 * @throws WrongKeyError when records need a root key that is not loaded.
 */
export function rekeyDatabaseFile(file: string, cipher: ValueCipher): RekeyReport {
  return rekeyFile(file, cipher);
}

/**
 * A SQLite data dir's audit log, read-only.
 * @throws ConfigError when there is no database or no audit table there.
 */
export const openSqliteAuditLog = openAuditLog;

/**
 * A PostgreSQL database's audit log (every writer's chain), on one connection.
 * @throws the driver's error when the database cannot be reached.
 */
export async function openPgAuditLog(url: string): Promise<PgAuditLog> {
  const { openPgAuditLog: open } = await import("./pg/tools/audit.js");
  return open(url);
}

/**
 * The PostgreSQL database at `url` with this build's schema, as the target
 * of `migrate --from-sqlite`.
 * @throws the driver's error when it cannot be reached or migrated.
 */
export async function openMigrationTarget(url: string): Promise<MigrationTarget> {
  const { openMigrationTarget: open } = await import("./pg/tools/migrate.js");
  return open(url);
}
