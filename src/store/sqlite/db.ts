import { chmodSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import type { Database as Db } from "better-sqlite3";

export type { Db };

/** Where schema.sql sits: the package root, beside dist/ (the bundle) and three levels above this source file. */
const SCHEMA_PATHS = [
  fileURLToPath(new URL("../schema.sql", import.meta.url)),
  fileURLToPath(new URL("../../../schema.sql", import.meta.url)),
];

/** schema.sql's text, from the bundle's place or the sources' (tests run the sources). */
function readSchema(): string {
  try {
    return readFileSync(SCHEMA_PATHS[0] as string, "utf8");
  } catch {
    return readFileSync(SCHEMA_PATHS[1] as string, "utf8");
  }
}

interface Section {
  version: number;
  sql: string;
}

/** Splits schema.sql into its "-- version: N" sections, in order. */
export function schemaSections(text: string = readSchema()): Section[] {
  const sections: Section[] = [];
  let current: Section | undefined;
  for (const line of text.split("\n")) {
    const m = /^-- version: (\d+)\s*$/.exec(line);
    if (m) {
      current = { version: Number(m[1]), sql: "" };
      sections.push(current);
    } else if (current) {
      current.sql += line + "\n";
    }
  }
  return sections;
}

/** The schema version this build writes (the last section of schema.sql). */
export function latestSchemaVersion(): number {
  const sections = schemaSections();
  return sections[sections.length - 1]?.version ?? 0;
}

/** How long a statement waits for another connection's lock (the `backup` command's), milliseconds. */
export const BUSY_TIMEOUT_MS = 5000;
/** `journal_size_limit`: the most a WAL file keeps after a checkpoint, bytes (4 MiB). */
export const JOURNAL_SIZE_LIMIT_BYTES = 4 * 1024 * 1024;

/**
 * Opens (or creates) the database and brings its schema up to date.
 *
 * Pragmas: WAL journal; `synchronous=FULL` so an acknowledged commit survives
 * power loss (docs/operations.md, "Durability"); `secure_delete` so a burned
 * secret's ciphertext is overwritten, not left in free pages; foreign keys on.
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
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    migrate(db);
  } catch (err) {
    db.close();
    throw err;
  }
  return db;
}

/**
 * Applies every schema.sql section above the database's user_version, each
 * with its version bump in one transaction.
 */
export function migrate(db: Db): void {
  const current = Number(db.pragma("user_version", { simple: true }));
  const sections = schemaSections();
  const latest = sections[sections.length - 1]?.version ?? 0;
  if (current > latest) {
    throw new Error(`the database has schema version ${current}, newer than this ephemeral-vault (${latest}); upgrade ephemeral-vault`);
  }
  for (const section of sections) {
    if (section.version <= current) continue;
    db.transaction(() => {
      db.exec(section.sql);
      db.pragma(`user_version = ${section.version}`);
    }).immediate();
  }
}

/** Reads a value of the meta table, or undefined. */
export function getMeta(db: Db, name: string): string | undefined {
  const row = db.prepare("SELECT value FROM meta WHERE name = ?").get(name) as { value: string } | undefined;
  return row?.value;
}

/** Writes a value of the meta table (insert or replace). */
export function setMeta(db: Db, name: string, value: string): void {
  db.prepare("INSERT INTO meta (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value").run(name, value);
}
