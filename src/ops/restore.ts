import { chmodSync, existsSync, linkSync, renameSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { ConfigError } from "../config.js";
import type { ValueCipher } from "../crypto.js";
import { latestSchemaVersion } from "../db.js";
import { prepareDataDir, verifyRootKeys, WrongKeyError } from "../keyfiles.js";
import { fsyncFile, removeDatabaseFiles } from "./backup.js";
import {
  countRows,
  dataDirOf,
  EXIT_FAILED,
  EXIT_OK,
  fileStamp,
  formatCounts,
  integrityOf,
  loadCipher,
  parseOpsArgs,
  processOutput,
} from "./common.js";
import type { OpsOutput, VaultCounts } from "./common.js";
import { lockDataDir } from "./lock.js";

/** A file that cannot be restored: the message says why; nothing was replaced. */
export class RestoreRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RestoreRefused";
  }
}

/**
 * Checks a database copy before it replaces anything: integrity, an
 * ephemeral-vault schema no newer than this build, and that the configured
 * root keys open it, by the server's own start check (verifyRootKeys, which
 * also records the current key id in the meta row as a start would) and by
 * opening one stored value per root key id found in it.
 * @throws RestoreRefused naming the first problem.
 */
export function checkCopy(db: Database.Database, cipher: ValueCipher): VaultCounts {
  const integrity = integrityOf(db);
  if (integrity !== "ok") throw new RestoreRefused(`the file failed its integrity check: ${integrity}`);
  const version = Number(db.pragma("user_version", { simple: true }));
  const latest = latestSchemaVersion();
  if (version > latest) {
    throw new RestoreRefused(`the file has schema version ${version}, newer than this ephemeral-vault (${latest}); upgrade ephemeral-vault first`);
  }
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('meta', 'secrets')").all();
  if (version < 1 || tables.length !== 2) throw new RestoreRefused("the file is not an ephemeral-vault database");
  try {
    verifyRootKeys(db, cipher);
  } catch (err) {
    if (err instanceof WrongKeyError) throw new RestoreRefused(err.message);
    throw err;
  }
  const samples = db
    .prepare(
      `SELECT scope, key, created_at, ciphertext FROM secrets WHERE id IN
         (SELECT min(id) FROM secrets WHERE ciphertext IS NOT NULL GROUP BY substr(ciphertext, 1, 9))`,
    )
    .all() as { scope: string; key: string; created_at: number; ciphertext: Buffer }[];
  for (const row of samples) {
    try {
      cipher.decryptRecord(row.ciphertext, { scope: row.scope, key: row.key, createdAt: row.created_at });
    } catch {
      throw new RestoreRefused(
        "the configured encryption key does not open the file's records; set the key it was written with (VAULT_ENCRYPTION_KEY, older ones in VAULT_PREVIOUS_ENCRYPTION_KEYS)",
      );
    }
  }
  return countRows(db);
}

/** What restoreDatabase() did. */
export interface RestoreReport {
  /** The restored database, `<data dir>/vault.db`. */
  database: string;
  /** Where the database it replaced was kept, or null when there was none. */
  previous: string | null;
  counts: VaultCounts;
}

/**
 * Replaces a data dir's database with a backup, offline.
 *
 * Takes the data-dir lock (refused while a vault runs there), copies the file
 * into the data dir with SQLite's backup API (a file with a -wal beside it is
 * copied whole), checks the copy (checkCopy) before anything is replaced,
 * then keeps the current database as `vault.db.before-restore-<UTC stamp>`
 * (its WAL checkpointed into it first, or moved beside it with the same
 * stamp when it cannot be opened, so no stale -wal is left for the new file)
 * and renames the fsynced copy over `vault.db`: at every moment `vault.db` is
 * either the old or the new database.
 *
 * @throws ConfigError when the data dir is locked or unusable; RestoreRefused
 *   when the file is damaged, newer, or not opened by the configured keys.
 */
export async function restoreDatabase(file: string, dataDir: string, cipher: ValueCipher, now: number = Date.now()): Promise<RestoreReport> {
  if (!existsSync(file)) throw new RestoreRefused(`no file at ${file}`);
  prepareDataDir(dataDir);
  const lock = lockDataDir(dataDir, "restore");
  const target = join(dataDir, "vault.db");
  const stamp = fileStamp(now);
  const temp = join(dataDir, `vault.db.restore-${stamp}.tmp`);
  try {
    removeDatabaseFiles(temp);
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
    chmodSync(temp, 0o600);
    let counts: VaultCounts;
    const copy = new Database(temp, { fileMustExist: true });
    try {
      copy.pragma("journal_mode = DELETE");
      counts = checkCopy(copy, cipher);
    } finally {
      copy.close();
    }
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
    return { database: target, previous, counts };
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
  let merged = false;
  try {
    const old = new Database(target, { fileMustExist: true, timeout: 0 });
    try {
      old.pragma("wal_checkpoint(TRUNCATE)");
      old.pragma("journal_mode = DELETE");
      merged = true;
    } finally {
      old.close();
    }
  } catch {
    merged = false;
  }
  if (!merged) moveAside(target, previous);
  linkSync(target, previous);
  chmodSync(previous, 0o600);
}

/** Moves a database's -wal and -shm files, if any, to the same names beside `previous`. */
function moveAside(target: string, previous: string): void {
  for (const suffix of ["-wal", "-shm"]) {
    if (existsSync(target + suffix)) renameSync(target + suffix, previous + suffix);
  }
}

/**
 * `ephemeral-vault restore FILE [--data-dir DIR] [--encryption-key KEY]
 * [--previous-encryption-keys KEYS]`: replaces the data dir's database with a
 * backup (restoreDatabase), offline.
 * @returns 0 when restored, 1 when the file was refused or the restore failed
 *   (nothing replaced).
 * @throws ConfigError for usage errors, a bad key setting or a running vault (exit 2).
 */
export async function restoreCommand(
  argv: string[],
  env: Record<string, string | undefined> = process.env,
  output: OpsOutput = processOutput,
): Promise<number> {
  const { positionals, values } = parseOpsArgs(argv, ["data-dir", "encryption-key", "previous-encryption-keys"]);
  if (positionals.length !== 1 || positionals[0] === "") {
    throw new ConfigError("usage: ephemeral-vault restore FILE [--data-dir DIR] [--encryption-key KEY] [--previous-encryption-keys KEYS]");
  }
  const file = positionals[0] as string;
  const dataDir = dataDirOf(values, env);
  const cipher = loadCipher(dataDir, values, env);
  try {
    const report = await restoreDatabase(file, dataDir, cipher);
    output.out(
      `restored ${file} into ${report.database}` +
        (report.previous === null ? "" : `; the previous database is kept at ${report.previous}`) +
        "\n" +
        formatCounts(report.counts),
    );
    return EXIT_OK;
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    output.err(`ephemeral-vault: restore refused: ${(err as Error).message}; nothing was replaced\n`);
    return EXIT_FAILED;
  }
}
