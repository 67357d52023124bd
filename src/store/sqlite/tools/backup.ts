/*
 * The SQLite parts of `backup` and `restore` (docs/operations.md,
 * "Backups"): the online copy, the checks of a copy, and the switch of a
 * database to one self-contained file. The files around them (partial
 * names, MAC files, renames, fsyncs) are ops/backup.ts's and ops/restore.ts's.
 */
import Database from "better-sqlite3";
import type { ValueCipher } from "../../../crypto/cipher.js";
import { getMeta } from "../db.js";
import { RestoreRefused } from "../../tool-shapes.js";
import type { CopyFacts, VaultCounts } from "../../tool-shapes.js";
import { countRows, integrityOf } from "./counts.js";
import { checkCopy, checkNotOlder } from "./restore-checks.js";

/** How snapshotInto() steps and reports. */
export interface SnapshotOptions {
  /** Pages copied per step. */
  pagesPerStep: number;
  /** Progress is reported once the database has at least this many pages. */
  progressMinPages: number;
  /** Called after each step (copied and total pages). */
  onProgress?: ((copiedPages: number, totalPages: number) => void) | undefined;
}

/**
 * A consistent online copy of the database at `source` into `dest` (SQLite's
 * online backup API on a second connection, https://sqlite.org/backup.html):
 * one read transaction for the whole copy, so every page comes from the same
 * snapshot and the copy never restarts under concurrent writes.
 * @throws the driver's error when the source cannot be read.
 */
export async function snapshotInto(source: string, dest: string, options: SnapshotOptions): Promise<void> {
  const src = new Database(source, { fileMustExist: true, timeout: 5000 });
  try {
    src.exec("BEGIN");
    src.prepare("SELECT count(*) FROM sqlite_master").get(); // the snapshot starts here
    await src.backup(dest, {
      progress: ({ totalPages, remainingPages }) => {
        if (totalPages >= options.progressMinPages) options.onProgress?.(totalPages - remainingPages, totalPages);
        return options.pagesPerStep;
      },
    });
    src.exec("COMMIT");
  } finally {
    src.close();
  }
}

/**
 * Checks a backup copy at `file`: switches it to a rollback journal (one
 * self-contained file), hands the root key ids it records (meta
 * `root_key_ids`) to `checkKeys`, then runs `PRAGMA integrity_check`.
 * @returns its size, schema version and row counts.
 * @throws what `checkKeys` throws; Error when the copy fails its integrity check.
 */
export function inspectCopy(file: string, checkKeys: (rootKeyIds: string[]) => void): CopyFacts {
  const copy = new Database(file, { fileMustExist: true });
  try {
    copy.pragma("journal_mode = DELETE");
    checkKeys(JSON.parse(getMeta(copy, "root_key_ids") ?? "[]") as string[]);
    const integrity = integrityOf(copy);
    if (integrity !== "ok") throw new Error(`the copy failed its integrity check: ${integrity}`);
    const pages = Number(copy.pragma("page_count", { simple: true }));
    const pageSize = Number(copy.pragma("page_size", { simple: true }));
    return {
      pages,
      bytes: pages * pageSize,
      schemaVersion: Number(copy.pragma("user_version", { simple: true })),
      counts: countRows(copy),
    };
  } finally {
    copy.close();
  }
}

/**
 * Checks a restore's copy at `file` before it replaces anything: switched to
 * a rollback journal, then checkCopy (integrity, schema objects, keys, audit
 * chain) and, when `current` names the database it would replace,
 * checkNotOlder.
 * @returns the copy's row counts.
 * @throws RestoreRefused naming the first problem.
 */
export function checkRestoreCopy(file: string, cipher: ValueCipher, current: string | undefined, older: boolean): VaultCounts {
  const copy = new Database(file, { fileMustExist: true });
  try {
    copy.pragma("journal_mode = DELETE");
    const counts = checkCopy(copy, cipher);
    if (current !== undefined) checkNotOlder(copy, current, older);
    return counts;
  } finally {
    copy.close();
  }
}

/**
 * Copies a database (and its -wal, when there is one) with SQLite's backup API.
 * @throws RestoreRefused when it cannot be opened or read as a database.
 */
export async function copyWithBackupApi(file: string, temp: string): Promise<void> {
  let source: Database.Database;
  try {
    source = new Database(file, { readonly: true, fileMustExist: true });
  } catch (err) {
    throw new RestoreRefused(`${file} cannot be opened: ${(err as Error).message}`);
  }
  try {
    await source.backup(temp);
  } catch (err) {
    throw new RestoreRefused(`${file} cannot be read as a database: ${(err as Error).message}`);
  } finally {
    source.close();
  }
}

/**
 * Makes the database at `file` one self-contained file: its WAL checkpointed
 * into the main file and the file switched to a rollback journal.
 * @returns false when it cannot be opened or switched (damaged, or in use).
 */
export function mergeWal(file: string): boolean {
  try {
    const old = new Database(file, { fileMustExist: true, timeout: 0 });
    try {
      old.pragma("wal_checkpoint(TRUNCATE)");
      old.pragma("journal_mode = DELETE");
      return true;
    } finally {
      old.close();
    }
  } catch {
    return false;
  }
}
