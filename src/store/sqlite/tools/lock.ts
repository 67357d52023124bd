import { chmodSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { ConfigError } from "../../../config/types.js";
import type { DataDirLock } from "../../tool-shapes.js";

/** The lock file's name inside the data dir. */
export const LOCK_FILE = "vault.lock";

/**
 * Takes the data dir's exclusive lock, so one process at a time serves,
 * restores or rekeys a data dir instead of two sharing the WAL.
 *
 * The lock is SQLite's own fcntl lock on `vault.lock`, a tiny database opened
 * with `locking_mode = EXCLUSIVE`: after its first write, SQLite keeps the
 * exclusive lock until the connection closes. It is a POSIX advisory lock,
 * so the kernel releases it however the process ends (kill -9
 * included) and a restart can take it at once; no stale lock file is ever
 * left to clean up.
 *
 * @param dataDir an existing directory (not `:memory:`, which needs no lock).
 * @param what the command taking it, for the message ("serve", "restore", ...).
 * @throws ConfigError (the command exits 2) when another process holds it,
 *   or when the lock file cannot be opened.
 */
export function lockDataDir(dataDir: string, what: string): DataDirLock {
  const path = join(dataDir, LOCK_FILE);
  let db: Database.Database;
  try {
    db = new Database(path, { timeout: 0 });
  } catch (err) {
    throw new ConfigError(`${path} cannot be opened: ${(err as Error).message}`);
  }
  try {
    // The holder row needs no crash-safe journal, and no -journal file should sit in the data dir.
    db.pragma("journal_mode = MEMORY");
    db.pragma("locking_mode = EXCLUSIVE");
    db.exec("CREATE TABLE IF NOT EXISTS holder (id INTEGER PRIMARY KEY CHECK (id = 1), pid INTEGER NOT NULL, since INTEGER NOT NULL)");
    db.prepare("INSERT INTO holder (id, pid, since) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET pid = excluded.pid, since = excluded.since").run(
      process.pid,
      Date.now(),
    );
  } catch (err) {
    db.close();
    const code = (err as { code?: string }).code ?? "";
    if (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED")) {
      throw new ConfigError(
        `another ephemeral-vault is using the data dir ${dataDir} (${path} is locked); stop it before running ${what} there, or use another VAULT_DATA_DIR`,
      );
    }
    throw new ConfigError(`${path} cannot be locked: ${(err as Error).message}; if it is damaged, delete it (no vault runs there)`);
  }
  try {
    chmodSync(path, 0o600);
  } catch {
    // the lock works whatever its mode; 0600 only keeps the data dir owner-only
  }
  let held = true;
  return {
    path,
    release: () => {
      if (!held) return;
      held = false;
      db.close();
    },
  };
}
