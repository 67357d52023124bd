/*
 * The PostgreSQL side of `migrate --from-sqlite` (docs/scaling.md, "Moving
 * a SQLite vault"): the schema made, then every row copied in one
 * transaction and counted. The SQLite side is store/sqlite/tools/migrate-source.ts.
 */
import type pg from "pg";
import { ConfigError } from "../../../config/types.js";
import { ident } from "../../sql/ident.js";
import { MIGRATED_TABLES } from "../../tool-shapes.js";
import type { CopyCounts, MigrationSource, MigrationTarget } from "../../tool-shapes.js";
import { SQLITE_CHAIN } from "../audit/verify.js";
import { analyzeVaultTables, migratePg } from "../migrate.js";
import { openPgPool } from "../pool.js";

/** The tables whose PostgreSQL column `seq` takes SQLite's rowid (creation order). */
const SEQ_TABLES: ReadonlySet<string> = new Set(["orgs", "principals", "principal_keys", "scoped_keys", "webhooks", "requests"]);

/** The tables copied (MIGRATED_TABLES, parents first), each with the column that takes SQLite's rowid when it has one. */
const TABLES: readonly { name: string; seq?: string }[] = MIGRATED_TABLES.map((name) => (SEQ_TABLES.has(name) ? { name, seq: "seq" } : { name }));

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
  ["requests", "seq"],
  ["scoped_keys", "seq"],
  ["webhooks", "seq"],
];

/** Rows per INSERT statement. */
const BATCH = 500;

/**
 * The PostgreSQL database at `url` (two connections) with this build's
 * schema (migratePg).
 * @throws the driver's error when it cannot be reached or migrated.
 */
export async function openMigrationTarget(url: string): Promise<MigrationTarget> {
  const pool = await openPgPool({ url, poolSize: 2 });
  await migratePg(pool);
  return {
    copyFrom: (source, progress) => copy(pool, source, progress),
    end: () => pool.end(),
  };
}

async function copy(pool: pg.Pool, source: MigrationSource, progress: (line: string) => void): Promise<CopyCounts> {
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
      const sqliteCount = source.count(table.name);
      const columns = source.copiedColumns(table.name);
      const target = [...columns, ...(table.seq ? [table.seq] : []), ...(table.name === "audit" ? ["chain", "seq"] : [])].map(ident);
      const rows = source.rows(table.name);
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
    const last = source.lastAudit();
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
