import { closeSync, existsSync, fsyncSync, linkSync, openSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { ConfigError } from "../config.js";
import type { ValueCipher } from "../crypto/cipher.js";
import { inspectBackupCopy, snapshotDatabase } from "../store/tools.js";
import { backupMacLine, macFileOf } from "./backup-mac.js";
import type { VaultCounts } from "./common.js";

/**
 * Pages copied per backup step. Each step is a short read of the snapshot on
 * the command's own connection; in WAL mode the server's writers never wait
 * for it, and between steps the event loop runs (better-sqlite3 backup()).
 */
export const PAGES_PER_STEP = 256;
/** Databases of at least this many pages get progress lines on stderr. */
export const PROGRESS_MIN_PAGES = 8192;

/** What backupDatabase() made. */
export interface BackupReport {
  file: string;
  pages: number;
  bytes: number;
  schemaVersion: number;
  counts: VaultCounts;
}

export interface BackupOptions {
  /** Replace an existing destination file. */
  force?: boolean;
  pagesPerStep?: number;
  /** Called after each step once the database has PROGRESS_MIN_PAGES pages (or progressMinPages). */
  onProgress?: (copiedPages: number, totalPages: number) => void;
  progressMinPages?: number;
}

/**
 * A consistent online copy of a vault database (SQLite's online backup API
 * on a second connection, https://sqlite.org/backup.html): the command holds
 * one read transaction for the whole copy, so every page comes from the same
 * snapshot (the state at the start: every write acknowledged before it is
 * in, none after) and the copy never restarts under concurrent writes.
 *
 * The copy is written to `<dest>.partial-<pid>`, created with mode 0600
 * before any byte is written, switched to a rollback journal (one
 * self-contained file), checked with `PRAGMA integrity_check`, fsynced and
 * then moved to `dest` (never over an existing file unless `force`). Its MAC
 * under the current root key's backup MAC key is written to `dest.mac`
 * (ops/backup-mac.ts; mode 0600, moved into place after `dest`), which
 * `restore` checks before it replaces anything.
 *
 * @param source the live database file (`<data dir>/vault.db`).
 * @param cipher the root keys; the current one MACs the copy and must be one
 *   the database records as its own (meta `root_key_ids`).
 * @throws ConfigError when `dest` exists and `force` is not set, or the
 *   current root key is not the database's; Error when the source cannot be
 *   read or the copy fails its integrity check (the partial files are removed).
 */
export async function backupDatabase(source: string, dest: string, cipher: ValueCipher, options: BackupOptions = {}): Promise<BackupReport> {
  if (!existsSync(source)) throw new Error(`no database at ${source}`);
  if (existsSync(dest) && options.force !== true) throw new ConfigError(`${dest} exists; pass --force to overwrite it`);
  const partial = join(dirname(dest), `${basename(dest)}.partial-${process.pid}`);
  const macPartial = `${macFileOf(dest)}.partial-${process.pid}`;
  removeDatabaseFiles(partial);
  rmSync(macPartial, { force: true });
  // Owner only from the first byte: the copy holds every ciphertext and the audit log.
  closeSync(openSync(partial, "wx", 0o600));
  try {
    await snapshotDatabase(source, partial, {
      pagesPerStep: options.pagesPerStep ?? PAGES_PER_STEP,
      progressMinPages: options.progressMinPages ?? PROGRESS_MIN_PAGES,
      onProgress: options.onProgress,
    });
    const report: Omit<BackupReport, "file"> = inspectBackupCopy(partial, (listed) => {
      if (listed.length > 0 && !listed.includes(cipher.currentKeyId)) {
        throw new ConfigError(
          `the configured encryption key (${cipher.currentKeyId}) is not one this database was written with; set the vault's VAULT_ENCRYPTION_KEY (or --encryption-key)`,
        );
      }
    });
    fsyncFile(partial);
    writeFileSync(macPartial, backupMacLine(partial, cipher), { mode: 0o600, flag: "wx" });
    fsyncFile(macPartial);
    if (options.force === true) {
      renameSync(partial, dest);
    } else {
      linkSync(partial, dest); // fails with EEXIST instead of replacing a file made meanwhile
      rmSync(partial);
    }
    renameSync(macPartial, macFileOf(dest));
    fsyncFile(dirname(dest));
    return { file: dest, ...report };
  } catch (err) {
    removeDatabaseFiles(partial);
    rmSync(macPartial, { force: true });
    if ((err as NodeJS.ErrnoException).code === "EEXIST") throw new ConfigError(`${dest} exists; pass --force to overwrite it`);
    throw err;
  }
}

/** Removes a database file and its journal, WAL and shared-memory files, if any. */
export function removeDatabaseFiles(file: string): void {
  for (const suffix of ["", "-journal", "-wal", "-shm"]) rmSync(file + suffix, { force: true });
}

/** fsync of a file or a directory (after a rename, so the new name is durable). */
export function fsyncFile(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
