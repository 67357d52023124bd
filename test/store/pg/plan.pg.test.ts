import pg from "pg";
import { afterAll, expect, it } from "vitest";
import { migratePg, openPgPool } from "../../../src/store/pg/index.js";
import { pgSchemaSections } from "../../../src/store/pg/migrate.js";
import { AUDIT_PAGE_SQL, PgAuditStore } from "../../../src/store/pg/audit/store.js";
import { COUNTED_READ_SQL, LIVE_LOOKUP_SQL } from "../../../src/store/pg/secrets.js";
import { createTestDatabase, describePg } from "../../support/pg-database.js";
import type { TestDatabase } from "../../support/pg-database.js";

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

// An audit page by key right after the key's rows grew fast (docs/performance.md, "Reads at
// scale"): with statistics from when `audit` was empty, the planner fetched every row of the key by
// a bitmap scan and sorted them. The store's page reads an index in id order and stops at the limit.
const READS = 160_000;

/** The plan PgAuditStore.page runs for `filter`, on `client` (in a transaction, as a unit of work runs it). */
async function auditPagePlan(client: pg.Client, filter: { action?: string; key?: string; keyPrefix?: string }): Promise<string> {
  // The store's own statements on its own connection; only the page itself is EXPLAINed.
  const explaining = {
    query: (text: string, values?: unknown[]) => client.query(text === AUDIT_PAGE_SQL ? `EXPLAIN (COSTS OFF) ${text}` : text, values),
  } as unknown as pg.PoolClient;
  const store = new PgAuditStore(explaining, { name: "test", head: undefined }, null);
  await client.query("BEGIN");
  try {
    const rows = (await store.page({
      scope: "global",
      sinceMs: undefined,
      untilMs: undefined,
      beforeId: undefined,
      action: filter.action ?? null,
      key: filter.key ?? null,
      keyPrefix: filter.keyPrefix ?? null,
      limit: 101,
    })) as unknown as { "QUERY PLAN": string }[];
    return rows.map((row) => row["QUERY PLAN"]).join("\n");
  } finally {
    await client.query("COMMIT");
  }
}

describePg("the audit page's plan", () => {
  it("reads a page from an index in id order, without a sort, when the statistics predate the key's rows", async () => {
    const db = await createTestDatabase();
    databases.push(db);
    const pool = await openPgPool({ url: db.url, poolSize: 1 });
    await migratePg(pool); // ANALYZEs `audit` while it is empty
    await pool.end();
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      await client.query("ALTER TABLE audit SET (autovacuum_enabled = false)");
      // A thousand keys with a row each, then reads: two in five of one key, the rest spread over the others.
      await client.query(
        `INSERT INTO audit (scope, at, action, key, actor, ip, chain, seq, hash)
         SELECT 'global', g, CASE WHEN g <= 1000 THEN 'secret.created' ELSE 'secret.read' END,
                CASE WHEN g <= 1000 THEN 'k' || g WHEN g % 5 < 2 THEN 'hot' ELSE 'k' || (g % 1000 + 1) END,
                'master', '127.0.0.1', 'c', g, md5(g::text) || md5(g::text)
         FROM generate_series(1, ${1000 + READS}) g`,
      );
      // The statistics still say what the migrations' ANALYZE saw: an empty table.
      const stale = await client.query<{ n: number }>("SELECT reltuples::float8 AS n FROM pg_class WHERE relname = 'audit'");
      expect(stale.rows[0]?.n).toBe(0);
      // Random reads priced high (a server's own setting) make the bitmap scan and sort the
      // planner's choice for a key it thinks rare, as stale statistics alone made it on the
      // benchmark's database; without the store's hint the page then sorts the key's rows.
      await client.query("SET random_page_cost = 40");
      const bare = await client.query<{ "QUERY PLAN": string }>(
        `EXPLAIN (COSTS OFF) ${AUDIT_PAGE_SQL}`,
        ["global", null, null, null, null, "hot", null, 101],
      );
      expect(bare.rows.map((row) => row["QUERY PLAN"]).join("\n")).toContain("Sort");
      for (const filter of [{ key: "hot" }, { key: "k5" }, { action: "secret.read" }, {}, { action: "secret.read", key: "hot" }]) {
        const plan = await auditPagePlan(client, filter);
        expect(plan, JSON.stringify(filter)).toMatch(/Index (Only )?Scan Backward/);
        expect(plan, JSON.stringify(filter)).not.toContain("Sort");
      }
      const newest = await client.query<{ id: string }>("SELECT id::text AS id FROM audit a WHERE key = 'hot' ORDER BY a.id DESC LIMIT 3");
      const hotNewest = newest.rows.map((row) => Number(row.id));
      // The hint is gone after the page: later statements of the transaction plan as configured.
      await client.query("BEGIN");
      const store = new PgAuditStore(client as unknown as pg.PoolClient, { name: "test", head: undefined }, null);
      const page = await store.page({ scope: "global", sinceMs: undefined, untilMs: undefined, beforeId: undefined, action: null, key: "hot", keyPrefix: null, limit: 3 });
      expect(page.map((row) => Number(row.id))).toEqual(hotNewest);
      const setting = await client.query<{ enable_sort: string }>("SHOW enable_sort");
      await client.query("COMMIT");
      expect(setting.rows[0]?.enable_sort).toBe("on");
    } finally {
      await client.end();
    }
  });
});
