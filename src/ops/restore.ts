import { chmodSync, existsSync, linkSync, renameSync } from "node:fs";
import { join } from "node:path";
import type { ValueCipher } from "../crypto/cipher.js";
import { checkRestoreFile, copyDatabaseFile, mergeDatabaseWal, RestoreRefused } from "../store/tools.js";
import { prepareDataDir } from "../runtime/keyfiles.js";
import { fsyncFile, removeDatabaseFiles } from "./backup.js";
import { BackupNotAuthentic, copyAuthenticated } from "./backup-mac.js";
import { fileStamp } from "./common.js";
import type { VaultCounts } from "./common.js";
import { lockDataDir } from "../store/tools.js";

export { RestoreRefused };

/** What restoreDatabase() did. */
export interface RestoreReport {
  /** The restored database, `<data dir>/vault.db`. */
  database: string;
  /** Where the database it replaced was kept, or null when there was none. */
  previous: string | null;
  counts: VaultCounts;
  /** Whether the backup's MAC file was checked ("unauthenticated": none, and --unauthenticated). */
  authentication: "authenticated" | "unauthenticated";
}

/** How restoreDatabase() treats the backup. */
export interface RestoreOptions {
  /** When set, a backup without a MAC file (an older build's) is accepted; a MAC file that does not match never is. */
  unauthenticated?: boolean;
  /** When set, a backup that does not hold the current database's audit head (an older one) is restored too (`--older`; checkNotOlder, store/sqlite/tools/restore-checks.ts). */
  older?: boolean;
  /** The time of the `vault.db.before-restore-<stamp>` name, ms. */
  now?: number;
}

/**
 * Replaces a data dir's database with a backup, offline.
 *
 * Takes the data-dir lock (refused while a vault runs there), copies the
 * file into the data dir byte for byte while checking its MAC (`FILE.mac`,
 * ops/backup-mac.ts; with `unauthenticated` and no MAC file, with SQLite's
 * backup API instead, so a file with a -wal beside it is copied whole),
 * checks the copy (checkRestoreFile, store/tools.ts: integrity, schema objects, keys, audit chain)
 * before anything is replaced, refuses a backup older than the current
 * database (checkNotOlder: it lacks the current audit head) unless
 * `older`, then keeps the current database as
 * `vault.db.before-restore-<UTC stamp>` (its WAL checkpointed into it first,
 * or moved beside it with the same stamp when it cannot be opened, so no
 * stale -wal is left for the new file) and renames the fsynced copy over
 * `vault.db`: at every moment `vault.db` is either the old or the new
 * database.
 *
 * @throws ConfigError when the data dir is locked or unusable; RestoreRefused
 *   when the file is not authentic, damaged, newer, has schema objects the
 *   vault does not define, a broken audit chain, is not opened by the
 *   configured keys, or is older than the current database without `older`.
 */
export async function restoreDatabase(file: string, dataDir: string, cipher: ValueCipher, options: RestoreOptions = {}): Promise<RestoreReport> {
  if (!existsSync(file)) throw new RestoreRefused(`no file at ${file}`);
  prepareDataDir(dataDir);
  const lock = lockDataDir(dataDir, "restore");
  const target = join(dataDir, "vault.db");
  const stamp = fileStamp(options.now ?? Date.now());
  const temp = join(dataDir, `vault.db.restore-${stamp}.tmp`);
  try {
    removeDatabaseFiles(temp);
    let authentication: RestoreReport["authentication"];
    try {
      authentication = copyAuthenticated(file, temp, cipher, options.unauthenticated === true);
    } catch (err) {
      if (err instanceof BackupNotAuthentic) throw new RestoreRefused(err.message);
      throw new RestoreRefused(`${file} cannot be read: ${(err as Error).message}`);
    }
    if (authentication === "unauthenticated") await copyDatabaseFile(file, temp);
    chmodSync(temp, 0o600);
    const counts: VaultCounts = checkRestoreFile(temp, cipher, existsSync(target) ? target : undefined, options.older === true);
    fsyncFile(temp);

    let previous: string | null = null;
    const kept = join(dataDir, `vault.db.before-restore-${stamp}`);
    if (existsSync(target)) {
      previous = kept;
      keepPrevious(target, previous);
    } else {
      // A -wal without its database would be replayed into the new file: move it aside.
      moveAside(target, kept);
    }
    renameSync(temp, target);
    fsyncFile(dataDir);
    return { database: target, previous, counts, authentication };
  } catch (err) {
    removeDatabaseFiles(temp);
    throw err;
  } finally {
    lock.release();
  }
}

/**
 * Keeps the current database at `previous` (mode 0600) without ever leaving
 * `target` missing: its WAL is checkpointed into the main file and the file
 * switched to a rollback journal, then hard-linked to `previous`. When it
 * cannot be opened (damaged), its -wal and -shm are moved beside `previous`
 * instead, so the old set stays together and none is left for the new file.
 */
function keepPrevious(target: string, previous: string): void {
  if (!mergeDatabaseWal(target)) moveAside(target, previous);
  linkSync(target, previous);
  chmodSync(previous, 0o600);
}

/** Moves a database's -wal and -shm files, if any, to the same names beside `previous`. */
function moveAside(target: string, previous: string): void {
  for (const suffix of ["-wal", "-shm"]) {
    if (existsSync(target + suffix)) renameSync(target + suffix, previous + suffix);
  }
}
