import { existsSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { ConfigError } from "../config.js";
import { openDatabase } from "../store/sqlite/db.js";
import { readsToReplay } from "../store/sqlite/tally/index.js";
import { latestSchemaVersion } from "../store/sqlite/migrate.js";
import { migratePg, openPgPool } from "../store/pg/index.js";
import { analyzeVaultTables } from "../store/pg/migrate.js";
import { SQLITE_CHAIN } from "../store/pg/audit-verify.js";
import { redactCredentials, redactUrl } from "../store/pg/redact.js";
import { lockDataDir } from "./lock.js";

/**
 * The tables copied, parents before children (foreign keys), each with the
 * PostgreSQL column that takes SQLite's rowid (creation order), if any.
 */
const TABLES: readonly { name: string; seq?: string }[] = [
  { name: "meta" },
  { name: "orgs", seq: "seq" },
  { name: "roles" },
  { name: "principals", seq: "seq" },
  { name: "principal_keys", seq: "seq" },
  { name: "scoped_keys", seq: "seq" },
  { name: "secrets" },
  { name: "webhooks", seq: "seq" },
  { name: "webhook_events" },
  { name: "webhook_deliveries" },
  { name: "webhook_attempts" },
  { name: "audit" },
];

/** Identity columns whose sequences continue after the copied ids. */
const IDENTITIES: readonly [string, string][] = [
  ["secrets", "id"],
  ["roles", "id"],
  ["audit", "id"],
  ["webhook_deliveries", "id"],
  ["webhook_attempts", "id"],
  ["orgs", "seq"],
  ["principals", "seq"],
  ["principal_keys", "seq"],
  ["scoped_keys", "seq"],
  ["webhooks", "seq"],
];

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

/** Rows per INSERT statement. */
const BATCH = 500;

/** How many rows each table holds, on each side. */
export type CopyCounts = Record<string, { sqlite: number; postgres: number }>;

/** `name` as an SQL identifier, double-quoted (the same rule in SQLite and PostgreSQL). */
function ident(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * The columns of every copied table as this build's own SQLite schema
 * declares them (schema.sql, applied to an empty in-memory database): the
 * only column names the copy ever puts into SQL.
 */
function schemaColumns(): Map<string, string[]> {
  const reference = openDatabase(":memory:");
  try {
    const columns = new Map<string, string[]>();
    for (const { name } of TABLES) {
      columns.set(name, (reference.prepare(`PRAGMA table_info(${ident(name)})`).all() as { name: string }[]).map((c) => c.name));
    }
    return columns;
  } finally {
    reference.close();
  }
}

/**
 * Checks that every copied table of `db` has exactly the columns of this
 * build's schema (a file edited by hand, or from another program, is refused
 * before anything is written).
 * @throws ConfigError naming the table and the columns that differ.
 */
function checkColumns(db: Database.Database, file: string, expected: Map<string, string[]>): void {
  for (const [table, columns] of expected) {
    const found = (db.prepare(`PRAGMA table_info(${ident(table)})`).all() as { name: string }[]).map((c) => c.name);
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
}

/**
 * `ephemeral-vault migrate --from-sqlite DIR --to postgres://...`: copies a
 * SQLite vault (stopped) into an empty PostgreSQL database, in one
 * PostgreSQL transaction: every row with its id, ciphertexts byte for byte
 * (they stay sealed to the same root keys and AAD), the audit log as the
 * chain `sqlite` with its hashes unchanged (seq = the SQLite id, so the
 * chain and its key segments verify as they did), and the meta rows (root
 * key record, chain segments). Then compares the row counts of every table.
 *
 * The data dir's lock (ops/lock.ts) is held from before the SQLite file is
 * opened until the copy has ended, so no vault can serve the data dir
 * meanwhile: a secret burned or written there after the copy would be
 * served again, or lost, on PostgreSQL (docs/scaling.md, "Moving a SQLite
 * vault"). The columns copied are this build's schema's, never the file's
 * own names, and every identifier is quoted.
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
    const db = new Database(file, { readonly: true, fileMustExist: true });
    try {
      const version = Number(db.pragma("user_version", { simple: true }));
      if (version !== latestSchemaVersion()) {
        throw new ConfigError(`${file} has schema version ${version}; start this ephemeral-vault on it once (it migrates), stop it, then copy`);
      }
      if (readsToReplay(db)) {
        throw new ConfigError(`${file} holds reads its secrets' rows do not count yet (the vault did not stop cleanly); start this ephemeral-vault on it once (it counts them), stop it, then copy`);
      }
      const columns = schemaColumns();
      checkColumns(db, file, columns);
      let pool: Awaited<ReturnType<typeof openPgPool>>;
      try {
        pool = await openPgPool({ url: options.url, poolSize: 2 });
        await migratePg(pool);
      } catch (err) {
        throw new ConfigError(`--to ${redactUrl(options.url)}: ${redactCredentials((err as Error).message, options.url)}`);
      }
      try {
        return await copy(db, pool, columns, options.progress ?? (() => {}));
      } finally {
        await pool.end();
      }
    } finally {
      db.close();
    }
  } finally {
    lock.release();
  }
}

async function copy(
  db: Database.Database,
  pool: Awaited<ReturnType<typeof openPgPool>>,
  schema: Map<string, string[]>,
  progress: (line: string) => void,
): Promise<CopyCounts> {
  const client = await pool.connect();
  const counts: CopyCounts = {};
  let failed: Error | undefined;
  try {
    await client.query("BEGIN");
    for (const { name } of TABLES) {
      const r = await client.query<{ n: number }>(`SELECT count(*)::integer AS n FROM ${ident(name)}`);
      if ((r.rows[0]?.n ?? 0) > 0 && name !== "meta") throw new ConfigError(`the target database is not empty (${name} has rows); copy into a new database`);
    }
    // Settings a fresh PostgreSQL node wrote (none yet) give way to the copied ones.
    await client.query("DELETE FROM meta");
    for (const table of TABLES) {
      const sqliteCount = (db.prepare(`SELECT count(*) AS n FROM ${ident(table.name)}`).get() as { n: number }).n;
      const columns = (schema.get(table.name) ?? []).filter((c) => !SQLITE_ONLY_COLUMNS.includes(`${table.name}.${c}`));
      const target = [...columns, ...(table.seq ? [table.seq] : []), ...(table.name === "audit" ? ["chain", "seq"] : [])].map(ident);
      const rows = db
        .prepare(
          `SELECT rowid AS __rowid, ${columns.map((c) => `${COPIED_FROM[`${table.name}.${c}`] ?? ident(c)} AS ${ident(c)}`).join(", ")}
             FROM ${ident(table.name)} ORDER BY rowid`,
        )
        .iterate() as IterableIterator<Record<string, unknown>>;
      let batch: unknown[][] = [];
      const flush = async () => {
        if (batch.length === 0) return;
        const values: unknown[] = [];
        const tuples = batch.map((row) => `(${row.map((v) => `$${values.push(v)}`).join(", ")})`);
        await client.query(`INSERT INTO ${ident(table.name)} (${target.join(", ")}) OVERRIDING SYSTEM VALUE VALUES ${tuples.join(", ")}`, values);
        batch = [];
      };
      for (const row of rows) {
        const values = columns.map((c) => row[c]);
        if (table.seq) values.push(row.__rowid);
        if (table.name === "audit") values.push(SQLITE_CHAIN, row.id);
        batch.push(values);
        if (batch.length >= BATCH) await flush();
      }
      await flush();
      const pgCount = (await client.query<{ n: number }>(`SELECT count(*)::integer AS n FROM ${ident(table.name)}`)).rows[0]?.n ?? 0;
      counts[table.name] = { sqlite: sqliteCount, postgres: pgCount };
      progress(`${table.name}: ${pgCount} of ${sqliteCount} rows`);
      if (pgCount !== sqliteCount) throw new ConfigError(`${table.name}: ${pgCount} rows copied of ${sqliteCount}; nothing was kept`);
    }
    // The copied chain's head, as the PostgreSQL audit store keeps one per chain.
    const last = db.prepare("SELECT id, at, hash FROM audit ORDER BY id DESC LIMIT 1").get() as { id: number; at: number; hash: string } | undefined;
    if (last !== undefined) {
      await client.query("INSERT INTO audit_chains (chain, seq, hash, at) VALUES ($1, $2, $3, $4)", [SQLITE_CHAIN, last.id, last.hash, last.at]);
    }
    for (const [table, column] of IDENTITIES) {
      await client.query(
        `SELECT setval(pg_get_serial_sequence($1, $2), greatest((SELECT max(${ident(column)}) FROM ${ident(table)}), 0) + 1, false)`,
        [table, column],
      );
    }
    await client.query("COMMIT");
    // A bulk load leaves the tables without statistics until autovacuum's first autoanalyze.
    await analyzeVaultTables(client);
  } catch (err) {
    failed = err instanceof Error ? err : new Error(String(err));
    await client.query("ROLLBACK").catch(() => {});
    throw err;
  } finally {
    client.release(failed);
  }
  return counts;
}
