import type pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ValueCipher, generateRootKey } from "../../../../src/crypto/cipher.js";
import type { PgEngine } from "../../../../src/store/pg/index.js";
import { DatabaseUnavailableError } from "../../../../src/store/work.js";
import type { Vault } from "../../../../src/assembly/vault.js";
import { MASTER_KEY } from "../../../support/helpers.js";
import { createTestDatabase, describePg, openTestNode, storeSecret } from "../../../support/pg-database.js";
import type { TestDatabase } from "../../../support/pg-database.js";

// The PostgreSQL group commit (store/pg/batch/group-commit.ts, docs/performance.md "PostgreSQL"): the
// units of one event-loop turn share one transaction and one COMMIT; nothing is answered before
// that COMMIT; a failing unit fails alone; a batch whose COMMIT is lost answers none as success.

const NOW = Date.UTC(2026, 0, 1);

/** Counts the COMMITs sent on the pool's connections from now on. */
function countCommits(pool: pg.Pool): () => number {
  let commits = 0;
  const wrapped = new WeakSet<pg.PoolClient>();
  pool.on("acquire", (client) => {
    if (wrapped.has(client)) return;
    wrapped.add(client);
    const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
    (client as unknown as { query: typeof query }).query = (...args: unknown[]) => {
      if (args[0] === "COMMIT") commits++;
      return query(...args);
    };
  });
  return () => commits;
}

const secret = (key: string) => storeSecret(key, NOW);

describePg("the PostgreSQL group commit", () => {
  let db: TestDatabase;
  let engine: PgEngine;
  let vault: Vault<PgEngine>;
  let commits: () => number;

  const call = async (method: string, path: string, body?: unknown): Promise<Response> =>
    vault.app.request(path, {
      method,
      headers: { authorization: `Bearer ${MASTER_KEY}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const keys = async (prefix: string): Promise<string[]> => {
    const r = await engine.pool.query<{ key: string }>("SELECT key FROM secrets WHERE starts_with(key, $1) ORDER BY key", [prefix]);
    return r.rows.map((row) => row.key);
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    ({ engine, vault } = await openTestNode(db.url, new ValueCipher(generateRootKey()), 4, { now: () => NOW }, { groupCommit: true }));
    commits = countCommits(engine.pool);
    // A row keyed kill/... ends its own backend when its transaction commits: the COMMIT's answer is lost.
    await engine.pool.query(`
      CREATE FUNCTION kill_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF starts_with(NEW.key, 'kill/') THEN PERFORM pg_terminate_backend(pg_backend_pid()); END IF; RETURN NULL; END $$;
      CREATE CONSTRAINT TRIGGER kill_at_commit AFTER INSERT ON secrets DEFERRABLE INITIALLY DEFERRED
        FOR EACH ROW EXECUTE FUNCTION kill_at_commit();`);
  });

  afterAll(async () => {
    await engine?.close();
    await db?.drop();
  });

  it("serves fifty concurrent reads of one key with a handful of COMMITs, every read counted once", async () => {
    expect((await call("POST", "/secrets", { key: "gc/hot", value: "v", max_reads: 1000 })).status).toBe(201);
    const before = commits();
    const reads = await Promise.all(Array.from({ length: 50 }, () => call("GET", "/secrets/gc/hot")));
    const counts = await Promise.all(reads.map(async (res) => ((await res.json()) as { read_count: number }).read_count));
    expect(reads.every((res) => res.status === 200)).toBe(true);
    expect(counts.sort((x, y) => x - y)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(commits() - before).toBeLessThan(10);
  });

  it("burns exactly once when fifty readers race for three reads in shared transactions", async () => {
    expect((await call("POST", "/secrets", { key: "gc/burn", value: "v", max_reads: 3 })).status).toBe(201);
    const reads = await Promise.all(Array.from({ length: 50 }, () => call("GET", "/secrets/gc/burn")));
    expect(reads.filter((res) => res.status === 200)).toHaveLength(3);
    expect(reads.filter((res) => res.status === 404)).toHaveLength(47);
  });

  it("lets a unit that fails mid-batch fail alone: the others commit", async () => {
    const units = Array.from({ length: 10 }, (_, i) =>
      engine.tx.run(async (w) => {
        await w.secrets.insert(secret(`iso/${i}`));
        if (i === 4) throw new Error("unit 4 fails after its insert");
        if (i === 7) await w.audit.append({ scope: "global", at: NOW, action: "t", key: null, actor: "t", principal_id: null, ip: null, count: 0 });
        return i;
      }),
    );
    const outcomes = await Promise.allSettled(units);
    expect(outcomes.map((o) => o.status)).toEqual(Array.from({ length: 10 }, (_, i) => (i === 4 || i === 7 ? "rejected" : "fulfilled")));
    expect((outcomes[4] as PromiseRejectedResult).reason).toMatchObject({ message: "unit 4 fails after its insert" });
    expect((outcomes[7] as PromiseRejectedResult).reason).toMatchObject({ code: "23514" });
    expect(await keys("iso/")).toEqual(["iso/0", "iso/1", "iso/2", "iso/3", "iso/5", "iso/6", "iso/8", "iso/9"]);
  });

  it("answers none of a batch as success when its COMMIT is lost", async () => {
    const units = Array.from({ length: 8 }, (_, i) =>
      engine.tx.run(async (w) => {
        await w.secrets.insert(secret(i === 3 ? "kill/3" : `lost/${i}`));
        return i;
      }),
    );
    const outcomes = await Promise.allSettled(units);
    // The batch's one COMMIT was cut: none of its units may be acknowledged, and none committed.
    for (const o of outcomes) {
      expect(o.status).toBe("rejected");
      expect((o as PromiseRejectedResult).reason).toBeInstanceOf(DatabaseUnavailableError);
    }
    expect(await keys("lost/")).toEqual([]);
    expect(await keys("kill/")).toEqual([]);
    // The pool replaced the dead connection: the next batch commits.
    expect(await engine.tx.run(async (w) => (await w.secrets.insert(secret("after/1"))).key)).toBe("after/1");
  });
});
