import type pg from "pg";
import { orderingStatement } from "./batch/index.js";
import { sectionsToApply, splitSchemaSections } from "../schema-sections.js";
import { readPackageFile } from "../../package-files.js";

/**
 * The session advisory lock held while migrating: one 64-bit key, "ev_migr"
 * in ASCII, so two nodes starting at once take turns and the second finds
 * nothing left to do.
 */
export const MIGRATION_LOCK = 0x65765f6d69677200n;

/** The sections of schema-pg.sql, in order. */
export function pgSchemaSections(text?: string): { version: number; sql: string }[] {
  // The package root's schema-pg.sql (src/package-files.ts; in the single executable, its embedded copy).
  return splitSchemaSections(text ?? readPackageFile("schema-pg.sql"));
}

/**
 * Brings a PostgreSQL database's schema up to date: under the session
 * advisory lock MIGRATION_LOCK, creates `schema_migrations` when missing and
 * applies each section of schema-pg.sql above the highest recorded version,
 * each with its record in one transaction, then ANALYZE when a section was
 * applied, so the planner has statistics from the first request on.
 * @returns the versions applied (empty when the schema was current).
 * @throws Error when the database has a version newer than this build, or
 *   whatever PostgreSQL throws (the failing section is rolled back).
 */
export async function migratePg(pool: pg.Pool): Promise<number[]> {
  const client = await pool.connect();
  const applied: number[] = [];
  // A failed migration closes its client instead of pooling it (its connection may be the cause).
  let failed: Error | undefined;
  try {
    await client.query(orderingStatement("SELECT pg_advisory_lock($1)").with([MIGRATION_LOCK.toString()]));
    try {
      await client.query("CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, applied_at bigint NOT NULL)");
      const r = await client.query<{ v: number | null }>("SELECT max(version) AS v FROM schema_migrations");
      const current = r.rows[0]?.v ?? 0;
      for (const section of sectionsToApply(pgSchemaSections(), current)) {
        await client.query("BEGIN");
        try {
          await client.query(section.sql);
          await client.query("INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)", [section.version, Date.now()]);
          await client.query("COMMIT");
        } catch (err) {
          await client.query("ROLLBACK");
          throw err;
        }
        applied.push(section.version);
      }
      // Statistics from the start: without them the planner guesses (docs/performance.md, "PostgreSQL").
      if (applied.length > 0) await analyzeVaultTables(client);
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK.toString()]);
    }
  } catch (err) {
    failed = err instanceof Error ? err : new Error(String(err));
    throw err;
  } finally {
    client.release(failed);
  }
  return applied;
}

/**
 * ANALYZE of the vault's own tables (those of the current schema), not of
 * the whole database: a bare ANALYZE also samples every system catalog,
 * which costs far more than the vault's tables on a fresh database.
 */
export async function analyzeVaultTables(client: pg.ClientBase): Promise<void> {
  const r = await client.query<{ t: string }>("SELECT quote_ident(tablename) AS t FROM pg_tables WHERE schemaname = current_schema()");
  if (r.rows.length > 0) await client.query(`ANALYZE ${r.rows.map((row) => row.t).join(", ")}`);
}
