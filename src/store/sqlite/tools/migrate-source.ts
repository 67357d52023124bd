/*
 * The SQLite side of `migrate --from-sqlite` (docs/scaling.md, "Moving a
 * SQLite vault"): the file read-only, its columns checked against this
 * build's schema, its rows in creation order. The PostgreSQL side is
 * store/pg/tools/migrate.ts.
 */
import Database from "better-sqlite3";
import { ConfigError } from "../../../config/types.js";
import { ident } from "../../sql/ident.js";
import type { MigrationSource } from "../../tool-shapes.js";
import { openDatabase } from "../db.js";
import { readsToReplay } from "../tally/index.js";

/**
 * Columns of the SQLite schema that PostgreSQL does not have, left out of the
 * copy: the SQLite audit store's key-chain heads (schema.sql version 13),
 * which the PostgreSQL audit store replaces with its index by key
 * (docs/audit.md). `audit.prev` is copied (schema-pg.sql version 6): from
 * SQLite schema version 16 on the chain hash covers it.
 */
const SQLITE_ONLY_COLUMNS: readonly string[] = ["secrets.audit_head"];

/**
 * Columns copied from an expression rather than the column itself: a
 * secret's read count is its `secret_reads` row's when it has one, the
 * SQLite read tally's written-back pair (schema.sql version 15), a table
 * PostgreSQL does not have.
 */
const COPIED_FROM: Readonly<Record<string, string>> = {
  "secrets.read_count": 'coalesce((SELECT r.read_count FROM secret_reads AS r WHERE r.id = "secrets".id), "secrets".read_count)',
};

/**
 * The columns of each of `tables` as this build's own SQLite schema
 * declares them (schema.sql, applied to an empty in-memory database): the
 * only column names the copy ever puts into SQL.
 */
function schemaColumns(tables: readonly string[]): Map<string, string[]> {
  const reference = openDatabase(":memory:");
  try {
    const columns = new Map<string, string[]>();
    for (const name of tables) columns.set(name, columnsOf(reference, name));
    return columns;
  } finally {
    reference.close();
  }
}

function columnsOf(db: Database.Database, table: string): string[] {
  return (db.prepare(`PRAGMA table_info(${ident(table)})`).all() as { name: string }[]).map((c) => c.name);
}

/**
 * Opens the SQLite database `file` read-only as a migration's source.
 * @throws the driver's error when it cannot be opened.
 */
export function openMigrationSource(file: string): MigrationSource {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  let schema = new Map<string, string[]>();
  const copied = (table: string): string[] => (schema.get(table) ?? []).filter((c) => !SQLITE_ONLY_COLUMNS.includes(`${table}.${c}`));
  return {
    schemaVersion: Number(db.pragma("user_version", { simple: true })),
    holdsReadsToReplay: () => readsToReplay(db),
    checkColumns(tables) {
      const expected = schemaColumns(tables);
      for (const [table, columns] of expected) {
        const found = columnsOf(db, table);
        const missing = columns.filter((c) => !found.includes(c));
        const extra = found.filter((c) => !columns.includes(c));
        if (missing.length > 0 || extra.length > 0) {
          const what = [
            missing.length > 0 ? `missing ${missing.map((c) => JSON.stringify(c)).join(", ")}` : "",
            extra.length > 0 ? `unexpected ${extra.map((c) => JSON.stringify(c)).join(", ")}` : "",
          ].filter((x) => x !== "");
          throw new ConfigError(`${file}: table ${table} does not have the columns of this build's schema (${what.join("; ")}); nothing was copied`);
        }
      }
      schema = expected;
    },
    copiedColumns: copied,
    count: (table) => (db.prepare(`SELECT count(*) AS n FROM ${ident(table)}`).get() as { n: number }).n,
    rows: (table) => {
      // A WITHOUT ROWID table (receipts, oidc_identities) has no creation order to carry: its primary key orders it.
      const noRowid = db.prepare("SELECT wr FROM pragma_table_list WHERE schema = 'main' AND name = ?").get(table) as { wr: number } | undefined;
      const order = noRowid?.wr === 1 ? { id: "NULL", by: "" } : { id: "rowid", by: " ORDER BY rowid" };
      return db
        .prepare(
          `SELECT ${order.id} AS __rowid, ${copied(table)
            .map((c) => `${COPIED_FROM[`${table}.${c}`] ?? ident(c)} AS ${ident(c)}`)
            .join(", ")}
             FROM ${ident(table)}${order.by}`,
        )
        .iterate() as IterableIterator<Record<string, unknown>>;
    },
    lastAudit: () => db.prepare("SELECT id, at, hash FROM audit ORDER BY id DESC LIMIT 1").get() as { id: number; at: number; hash: string } | undefined,
    close: () => db.close(),
  };
}
