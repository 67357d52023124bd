import { afterAll, beforeAll, expect, it } from "vitest";
import { ValueCipher, generateRootKey } from "../../../../src/crypto/cipher.js";
import { DatabaseUnavailableError } from "../../../../src/model/engine-errors.js";
import type { PgEngine } from "../../../../src/store/pg/index.js";
import type { Queryable } from "../../../../src/store/pg/batch/queryable.js";
import { createTestDatabase, describePg, openTestNode } from "../../../support/pg-database.js";
import type { TestDatabase } from "../../../support/pg-database.js";

// A unit of work whose connection fails before its COMMIT was sent left nothing committed: the
// PostgreSQL unit of work runs it again on a new connection within VAULT_DATABASE_RETRY_MS
// (store/pg/batch/unit-of-work.ts; docs/scaling.md, "When the database goes away"). On the real
// cluster, no mocks: the unit's own backend is terminated (what a failover or a switchover's fast
// shutdown does to it), or its transaction refuses writes (a standby not yet promoted).

const pidOf = async (client: Queryable): Promise<number> => (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]?.pid ?? -1;

describePg("a unit of work whose connection fails before COMMIT", () => {
  let db: TestDatabase;
  const engines: PgEngine[] = [];
  const retried: unknown[] = [];

  /** A node on this file's database with the given retry window, milliseconds. */
  const engineWith = async (retryMs: number, groupCommit = false): Promise<PgEngine> => {
    const { engine } = await openTestNode(db.url, new ValueCipher(generateRootKey()), 4, {}, { groupCommit, retryMs, onRetry: (err) => retried.push(err) });
    engines.push(engine);
    return engine;
  };

  beforeAll(async () => {
    db = await createTestDatabase();
  });

  afterAll(async () => {
    for (const engine of engines) await engine.close();
    await db?.drop();
  });

  for (const groupCommit of [false, true]) {
    it(`runs again on a new connection when its backend is terminated mid-unit, and commits once (group commit ${groupCommit})`, async () => {
      const engine = await engineWith(5000, groupCommit);
      retried.length = 0;
      const pids: number[] = [];
      const result = await engine.tx.runOnClient(async (w, client) => {
        pids.push(await pidOf(client));
        await w.meta.set(`retry-probe-${groupCommit}`, `attempt ${pids.length}`);
        if (pids.length === 1) await client.query("SELECT pg_terminate_backend(pg_backend_pid())");
        return "committed";
      });
      expect(result).toBe("committed");
      expect(pids).toHaveLength(2);
      expect(pids[1]).not.toBe(pids[0]);
      // The first attempt's write died with its connection; the second one's stands.
      expect(await engine.tx.run((w) => w.meta.get(`retry-probe-${groupCommit}`))).toBe("attempt 2");
      expect(retried).toHaveLength(1);
      expect((retried[0] as { code?: string }).code).toBe("57P01");
    });
  }

  it("runs again on another connection when its transaction refuses writes (read_only_sql_transaction, a standby)", async () => {
    const engine = await engineWith(5000);
    retried.length = 0;
    const pids: number[] = [];
    await engine.tx.runOnClient(async (w, client) => {
      pids.push(await pidOf(client));
      if (pids.length === 1) await client.query("SET TRANSACTION READ ONLY");
      await w.meta.set("retry-read-only", `attempt ${pids.length}`);
    });
    expect(pids).toHaveLength(2);
    // The connection that refused writes was not handed out again.
    expect(pids[1]).not.toBe(pids[0]);
    expect(await engine.tx.run((w) => w.meta.get("retry-read-only"))).toBe("attempt 2");
    expect((retried[0] as { code?: string }).code).toBe("25006");
  });

  it("answers DatabaseUnavailableError at once with a window of 0, and within the window when every attempt fails", async () => {
    const none = await engineWith(0);
    let attempts = 0;
    await expect(
      none.tx.runOnClient(async (_w, client) => {
        attempts++;
        await client.query("SELECT pg_terminate_backend(pg_backend_pid())");
      }),
    ).rejects.toBeInstanceOf(DatabaseUnavailableError);
    expect(attempts).toBe(1);

    const short = await engineWith(400);
    attempts = 0;
    await expect(
      short.tx.runOnClient(async (_w, client) => {
        attempts++;
        await client.query("SELECT pg_terminate_backend(pg_backend_pid())");
      }),
    ).rejects.toBeInstanceOf(DatabaseUnavailableError);
    // Pauses of 25, 50, 100, 200 ms fit in 400 ms: several attempts, then it gave up.
    expect(attempts).toBeGreaterThan(2);
    expect(attempts).toBeLessThan(10);
  });

  it("does not run again a unit that failed on its own (a statement's error is the caller's)", async () => {
    const engine = await engineWith(5000);
    let attempts = 0;
    await expect(
      engine.tx.runOnClient(async (_w, client) => {
        attempts++;
        await client.query("SELECT * FROM no_such_table");
      }),
    ).rejects.toThrow(/no_such_table/);
    expect(attempts).toBe(1);
  });
});
