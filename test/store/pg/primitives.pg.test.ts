import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestDatabase, describePg } from "../../support/pg-database.js";
import type { TestDatabase } from "../../support/pg-database.js";

// The PostgreSQL behaviour the storage engine relies on, asserted on a real server: the
// guarded UPDATE that makes a burn exactly-once, and SKIP LOCKED claims for the outbox and
// the sweeper.

const connectAll = async (url: string, n: number): Promise<pg.Client[]> =>
  Promise.all(
    Array.from({ length: n }, async () => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      return client;
    }),
  );

/** Polls until `n` backends of this database wait on a lock (bounded; no timing assertion). */
const untilWaitingOnLock = async (probe: pg.Client, n: number): Promise<void> => {
  for (let i = 0; i < 500; i++) {
    const r = await probe.query<{ waiting: string }>(
      "SELECT count(*) AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
    );
    if (Number(r.rows[0]?.waiting) >= n) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`fewer than ${n} backends ever waited on the lock`);
};

describePg("PostgreSQL primitives for the storage engine", () => {
  let db: TestDatabase;
  let main: pg.Client;
  const open: pg.Client[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    main = new pg.Client({ connectionString: db.url });
    await main.connect();
  });

  afterAll(async () => {
    await Promise.all(open.map((c) => c.end().catch(() => undefined)));
    await main?.end();
    await db?.drop();
  });

  it("connects to a database of its own on a durable server and round-trips a table", async () => {
    const settings = await main.query<{ db: string; fsync: string; sync: string }>(
      "SELECT current_database() AS db, current_setting('fsync') AS fsync, current_setting('synchronous_commit') AS sync",
    );
    expect(settings.rows[0]).toEqual({ db: db.name, fsync: "on", sync: "on" });

    await main.query("CREATE TABLE notes (id bigint PRIMARY KEY, body bytea NOT NULL)");
    await main.query("INSERT INTO notes (id, body) VALUES ($1, $2)", [1, Buffer.from([0, 1, 2, 255])]);
    const r = await main.query<{ id: string; body: Buffer }>("SELECT id, body FROM notes");
    expect(r.rows).toEqual([{ id: "1", body: Buffer.from([0, 1, 2, 255]) }]);
  });

  it("admits exactly max winners when 20 connections race a guarded UPDATE ... RETURNING", async () => {
    await main.query("CREATE TABLE counters (id text PRIMARY KEY, n integer NOT NULL, max integer NOT NULL)");
    await main.query("INSERT INTO counters VALUES ('s', 0, 5)");
    const readers = await connectAll(db.url, 20);
    open.push(...readers);

    // Hold the row lock so that all 20 UPDATEs queue on it at once, then release them together:
    // each re-checks the guard on the row as the previous winner left it.
    await main.query("BEGIN");
    await main.query("SELECT n FROM counters WHERE id = 's' FOR UPDATE");
    const race = Promise.all(
      readers.map((c) => c.query<{ n: number }>("UPDATE counters SET n = n + 1 WHERE id = $1 AND n < max RETURNING n", ["s"])),
    );
    const probe = (await connectAll(db.url, 1))[0];
    if (!probe) throw new Error("no probe connection");
    open.push(probe);
    await untilWaitingOnLock(probe, 20);
    await main.query("COMMIT");
    const results = await race;

    const winners = results.filter((r) => r.rowCount === 1).map((r) => r.rows[0]?.n);
    expect(winners).toHaveLength(5);
    expect([...winners].sort((a, b) => (a ?? 0) - (b ?? 0))).toEqual([1, 2, 3, 4, 5]);
    expect(results.filter((r) => r.rowCount === 0)).toHaveLength(15);
    const final = await main.query<{ n: number }>("SELECT n FROM counters WHERE id = 's'");
    expect(final.rows[0]?.n).toBe(5);
  });

  it("over-admits when the same race is read-then-write, which is why the guard is in the UPDATE", async () => {
    await main.query("CREATE TABLE naive (id text PRIMARY KEY, n integer NOT NULL, max integer NOT NULL)");
    await main.query("INSERT INTO naive VALUES ('s', 0, 5)");
    const readers = await connectAll(db.url, 20);
    open.push(...readers);

    const seen = await Promise.all(readers.map((c) => c.query<{ n: number; max: number }>("SELECT n, max FROM naive WHERE id = 's'")));
    const admitted = seen.filter((r) => (r.rows[0]?.n ?? 0) < (r.rows[0]?.max ?? 0));
    await Promise.all(readers.map((c, i) => c.query("UPDATE naive SET n = $1 WHERE id = 's'", [(seen[i]?.rows[0]?.n ?? 0) + 1])));

    expect(admitted).toHaveLength(20);
    const final = await main.query<{ n: number }>("SELECT n FROM naive WHERE id = 's'");
    expect(final.rows[0]?.n).toBe(1);
  });

  it("hands each row to exactly one claimer with FOR UPDATE SKIP LOCKED, without blocking", async () => {
    await main.query("CREATE TABLE outbox (id serial PRIMARY KEY, state text NOT NULL DEFAULT 'pending')");
    await main.query("INSERT INTO outbox (state) SELECT 'pending' FROM generate_series(1, 5)");
    const claimers = await connectAll(db.url, 12);
    open.push(...claimers);

    await Promise.all(claimers.map((c) => c.query("BEGIN")));
    const claims = await Promise.all(
      claimers.map((c) =>
        c.query<{ id: number }>("SELECT id FROM outbox WHERE state = 'pending' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED"),
      ),
    );
    const ids = claims.flatMap((r) => r.rows.map((row) => row.id));
    expect([...ids].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5]);
    expect(claims.filter((r) => r.rowCount === 0)).toHaveLength(7);

    await Promise.all(
      claimers.map(async (c, i) => {
        const id = claims[i]?.rows[0]?.id;
        if (id !== undefined) await c.query("UPDATE outbox SET state = 'delivered' WHERE id = $1", [id]);
        await c.query("COMMIT");
      }),
    );
    const left = await main.query("SELECT id FROM outbox WHERE state = 'pending'");
    expect(left.rowCount).toBe(0);
  });

  it("frees a claim held by a connection that dies mid-delivery for another claimer", async () => {
    await main.query("CREATE TABLE deliveries (id serial PRIMARY KEY, state text NOT NULL DEFAULT 'pending')");
    await main.query("INSERT INTO deliveries DEFAULT VALUES");
    const [first, second] = await connectAll(db.url, 2);
    if (!first || !second) throw new Error("no claimer connections");
    open.push(first, second);
    const claim = "SELECT id FROM deliveries WHERE state = 'pending' LIMIT 1 FOR UPDATE SKIP LOCKED";

    await first.query("BEGIN");
    expect((await first.query(claim)).rowCount).toBe(1);
    await second.query("BEGIN");
    expect((await second.query(claim)).rowCount).toBe(0);
    await second.query("ROLLBACK");

    first.on("error", () => undefined);
    const pid = (await first.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]?.pid;
    await main.query("SELECT pg_terminate_backend($1, 5000)", [pid]);

    await second.query("BEGIN");
    const retry = await second.query<{ id: number }>(claim);
    expect(retry.rows).toEqual([{ id: 1 }]);
    await second.query("UPDATE deliveries SET state = 'delivered' WHERE id = $1", [retry.rows[0]?.id]);
    await second.query("COMMIT");
    expect((await main.query("SELECT id FROM deliveries WHERE state = 'pending'")).rowCount).toBe(0);
  });
});
