import pg from "pg";
import { afterAll, expect, it } from "vitest";
import { migratePg, openPgPool } from "../src/store/pg/index.js";
import { pgSchemaSections } from "../src/store/pg/migrate.js";
import { COUNTED_READ_SQL, LIVE_LOOKUP_SQL } from "../src/store/pg/secrets.js";
import { createTestDatabase, describePg } from "./pg-database.js";
import type { TestDatabase } from "./pg-database.js";

// Statistics from the start (docs/performance.md, "PostgreSQL"): a key lookup must use
// secrets_live_key even on a table that was never analyzed, where the planner used to take
// secrets_live_list and read every live secret of the scope; and the migrations ANALYZE.

const ROWS = 7000;
const databases: TestDatabase[] = [];
afterAll(async () => {
  for (const db of databases.splice(0)) await db.drop();
});

/** The plan of one of the vault's key lookups (default the live lookup), as text. */
async function lookupPlan(client: pg.Client, sql = LIVE_LOOKUP_SQL): Promise<string> {
  const literal = sql.replace("$1", "'global'").replace("$2", "'k5'").replace("$3", "0").replace(/\$4/g, "NULL");
  const r = await client.query<{ "QUERY PLAN": string }>(`EXPLAIN (COSTS OFF) ${literal}`);
  return r.rows.map((row) => row["QUERY PLAN"]).join("\n");
}

async function fill(client: pg.Client): Promise<void> {
  await client.query(
    `INSERT INTO secrets (scope, key, is_public, state, ciphertext, created_at, updated_at, read_count, burn_on_limit)
     SELECT 'global', 'k' || g, 0, 'active', '\\x00'::bytea, 0, 0, 0, 1 FROM generate_series(1, ${ROWS}) g`,
  );
}

describePg("the key lookup's plan", () => {
  it("uses secrets_live_key on a table with thousands of rows that was never analyzed", async () => {
    const db = await createTestDatabase();
    databases.push(db);
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      // The schema as the sections create it, without the migrations' ANALYZE, and no autovacuum to analyze behind our back.
      for (const section of pgSchemaSections()) await client.query(section.sql);
      await client.query("ALTER TABLE secrets SET (autovacuum_enabled = false)");
      await fill(client);
      const never = await client.query<{ n: string | null }>("SELECT last_analyze AS n FROM pg_stat_user_tables WHERE relname = 'secrets'");
      expect(never.rows[0]?.n ?? null).toBeNull();
      for (const sql of [LIVE_LOOKUP_SQL, COUNTED_READ_SQL]) {
        const plan = await lookupPlan(client, sql);
        expect(plan).toContain("secrets_live_key");
        expect(plan).not.toContain("secrets_live_list");
      }
    } finally {
      await client.end();
    }
  });

  it("the migrations ANALYZE the tables they create", async () => {
    const db = await createTestDatabase();
    databases.push(db);
    const pool = await openPgPool({ url: db.url, poolSize: 1 });
    try {
      await migratePg(pool);
      const r = await pool.query<{ analyzed: boolean }>("SELECT last_analyze IS NOT NULL AS analyzed FROM pg_stat_user_tables WHERE relname = 'secrets'");
      expect(r.rows[0]?.analyzed).toBe(true);
    } finally {
      await pool.end();
    }
  });
});
