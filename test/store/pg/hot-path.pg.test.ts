import { afterAll, beforeAll, expect, it } from "vitest";
import { ValueCipher, generateRootKey } from "../../../src/crypto/cipher.js";
import type { PgEngine } from "../../../src/store/pg/index.js";
import type { Vault } from "../../../src/assembly/vault.js";
import { MASTER_KEY } from "../../support/helpers.js";
import { createTestDatabase, describePg, openTestNode, storeSecret } from "../../support/pg-database.js";
import type { TestDatabase } from "../../support/pg-database.js";

// The PostgreSQL hot path (docs/performance.md, "PostgreSQL"): statements sent without waiting
// (BEGIN, the audit append, an expiry) never let a unit answer past their failure, and a read folded into its
// guarded UPDATE answers with the row version it counted, never an old value with new limits.

const NOW = Date.UTC(2026, 0, 1);

describePg("the PostgreSQL hot path", () => {
  let db: TestDatabase;
  const nodes: { engine: PgEngine; vault: Vault<PgEngine> }[] = [];

  const call = async (v: Vault<PgEngine>, method: string, path: string, body?: unknown): Promise<Response> =>
    v.app.request(path, {
      method,
      headers: { authorization: `Bearer ${MASTER_KEY}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  const liveCount = async (engine: PgEngine, key: string): Promise<number> => {
    const r = await engine.pool.query<{ n: number }>("SELECT count(*)::integer AS n FROM secrets WHERE key = $1", [key]);
    return r.rows[0]?.n ?? -1;
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    const cipher = new ValueCipher(generateRootKey());
    for (let i = 0; i < 2; i++) nodes.push(await openTestNode(db.url, cipher, 4, { now: () => NOW }));
  });

  afterAll(async () => {
    for (const n of nodes) await n.engine.close();
    await db?.drop();
  });

  const secret = (key: string) => storeSecret(key, NOW);
  // count 0 breaks the audit table's CHECK (count IS NULL OR count >= 1): the append fails at the server.
  const badRow = { scope: "global", at: NOW, action: "test.bad", key: null, actor: "test", principal_id: null, ip: null, count: 0 };

  it("fails the unit, and commits none of it, when its audit append sent without waiting fails", async () => {
    const { engine } = nodes[0] as { engine: PgEngine };
    const run = engine.tx.run(async (w) => {
      await w.secrets.insert(secret("wb/last"));
      await w.audit.append(badRow);
      return "acknowledged";
    });
    await expect(run).rejects.toMatchObject({ code: "23514" });
    expect(await liveCount(engine, "wb/last")).toBe(0);
  });

  it("reports the failed append, not the aborted transaction, when the unit went on after it", async () => {
    const { engine } = nodes[0] as { engine: PgEngine };
    const run = engine.tx.run(async (w) => {
      await w.audit.append(badRow);
      await w.secrets.insert(secret("wb/after"));
      return "acknowledged";
    });
    await expect(run).rejects.toMatchObject({ code: "23514" });
    expect(await liveCount(engine, "wb/after")).toBe(0);
    // The connection is sound afterwards: the next unit commits.
    await engine.tx.run(async (w) => {
      await w.secrets.insert(secret("wb/next"));
      await w.audit.append(Object.assign({}, badRow, { count: 1 }));
    });
    expect(await liveCount(engine, "wb/next")).toBe(1);
  });

  it("fails the unit, and commits none of it, when an expiry sent without waiting fails", async () => {
    const { engine } = nodes[0] as { engine: PgEngine };
    const live = await engine.tx.run((w) => w.secrets.insert(secret("wb/expire")));
    const run = engine.tx.run(async (w) => {
      await w.secrets.expire(live.id, NOW);
      await w.secrets.insert(secret("wb/expire-later"));
      // NaN is no bigint: the server refuses this UPDATE after the unit went on without its answer.
      await w.secrets.expire(live.id, Number.NaN);
      return "acknowledged";
    });
    await expect(run).rejects.toMatchObject({ code: "22P02" });
    expect(await liveCount(engine, "wb/expire-later")).toBe(0);
    const state = await engine.pool.query<{ state: string }>("SELECT state FROM secrets WHERE id = $1", [live.id]);
    expect(state.rows[0]?.state).toBe("active");
  });

  it("never answers a read with the old value and the new limits while PUTs replace it on the other node", async () => {
    const a = nodes[0] as { vault: Vault<PgEngine> };
    const b = nodes[1] as { vault: Vault<PgEngine> };
    expect((await call(a.vault, "POST", "/secrets", { key: "race/put", value: "old", max_reads: 1000 })).status).toBe(201);
    const reads: Promise<Response>[] = [];
    const puts: Promise<Response>[] = [];
    for (let i = 0; i < 40; i++) {
      reads.push(call(a.vault, "GET", "/secrets/race/put"));
      if (i % 10 === 5) puts.push(call(b.vault, "PUT", "/secrets/race/put", { value: `new${i}`, max_reads: 500 + i }));
    }
    for (const put of await Promise.all(puts)) expect(put.status).toBe(200);
    for (const res of await Promise.all(reads)) {
      expect(res.status).toBe(200);
      const body = (await res.json()) as { value: string; max_reads: number };
      // The value and the limits of one row version: "old" had 1000, "new<i>" had 500 + i.
      expect(body.max_reads).toBe(body.value === "old" ? 1000 : 500 + Number(body.value.slice(3)));
    }
  });
});
