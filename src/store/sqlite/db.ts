import { chmodSync } from "node:fs";
import Database from "better-sqlite3";
import type { Database as Db } from "better-sqlite3";
import { migrate } from "./migrate.js";
import { replayReads } from "./tally/index.js";
import { metaSelect, metaUpsert } from "../sql/meta.js";
import { paramsOf, render } from "../sql/template.js";

export type { Db };

/** How long a statement waits for another connection's lock (the `backup` command's), milliseconds. */
export const BUSY_TIMEOUT_MS = 5000;
/**
 * `wal_autocheckpoint`: the WAL pages after which a COMMIT checkpoints (SQLite's default is 1000).
 * A checkpoint runs on the event loop and copies each distinct page once, so its pause grows with
 * the pages written at random; 100 keeps each pause short for the same throughput (the figures:
 * docs/performance.md, "Reads at scale").
 */
export const CHECKPOINT_PAGES = 100;
/** `journal_size_limit`: the most a WAL file keeps after a checkpoint, bytes (4 MiB). */
export const JOURNAL_SIZE_LIMIT_BYTES = 4 * 1024 * 1024;

/**
 * Opens (or creates) the database and brings its schema up to date.
 *
 * Pragmas: WAL journal, checkpointed every CHECKPOINT_PAGES pages; `synchronous=FULL` so an acknowledged commit survives
 * power loss (docs/operations.md, "Durability"); `secure_delete` so a burned
 * secret's ciphertext is overwritten, not left in free pages; foreign keys on.
 * Then replays the reads a crash left only in the audit log (tally/read-replay.ts).
 *
 * @param file a path, or ":memory:".
 * @throws Error when the file is not a database, or was written by a newer
 *   version of ephemeral-vault (user_version above ours).
 */
export function openDatabase(file: string): Db {
  const db = new Database(file);
  try {
    // Owner only, whatever the umask: the file holds ciphertexts and the audit
    // log. SQLite gives the -wal and -shm files the database file's mode.
    if (file !== ":memory:") chmodSync(file, 0o600);
    if (file !== ":memory:") db.pragma("journal_mode = WAL");
    db.pragma("synchronous = FULL");
    db.pragma("foreign_keys = ON");
    db.pragma("secure_delete = ON");
    // After a checkpoint the WAL is cut back to this size (wal-scrub.ts truncates it to zero).
    if (file !== ":memory:") db.pragma(`journal_size_limit = ${JOURNAL_SIZE_LIMIT_BYTES}`);
    if (file !== ":memory:") db.pragma(`wal_autocheckpoint = ${CHECKPOINT_PAGES}`);
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    migrate(db);
    // Read counts a crash left only in the audit log (tally/read-tally.ts), before anything reads a row.
    replayReads(db);
  } catch (err) {
    db.close();
    throw err;
  }
  return db;
}

/** Reads a value of the meta table (metaSelect, store/sql/meta.ts), or undefined. */
export function getMeta(db: Db, name: string): string | undefined {
  const query = metaSelect(name);
  const rendered = render(query, "sqlite");
  const row = db.prepare(rendered.text).get(...paramsOf(query, rendered)) as { value: string } | undefined;
  return row?.value;
}

/** Writes a value of the meta table (insert or replace: metaUpsert, store/sql/meta.ts). */
export function setMeta(db: Db, name: string, value: string): void {
  const upsert = metaUpsert(name, value);
  const rendered = render(upsert, "sqlite");
  db.prepare(rendered.text).run(...paramsOf(upsert, rendered));
}
