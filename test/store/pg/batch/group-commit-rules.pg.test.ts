import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ValueCipher, generateRootKey } from "../../../../src/crypto/cipher.js";
import type { PgEngine } from "../../../../src/store/pg/index.js";
import type { Vault } from "../../../../src/assembly/vault.js";
import type { VaultOptions } from "../../../../src/assembly/vault.js";
import { MASTER_KEY } from "../../../support/helpers.js";
import { createTestDatabase, describePg, openTestNode, storeSecret } from "../../../support/pg-database.js";
import type { TestDatabase } from "../../../support/pg-database.js";

// The rules a group commit must keep while a batch's units run at once in its transaction
// (store/pg/batch/group-commit.ts, docs/performance.md "PostgreSQL"): what orders transactions (the
// free-tier advisory lock) still orders units; a failed statement rolls the batch back and every
// unit runs again alone; no answer carries what a later failure of its batch undid; two nodes burn
// a secret once.

const NOW = Date.UTC(2026, 0, 1);

describePg("the PostgreSQL group commit keeps the rules", () => {
  let db: TestDatabase;
  let admin: pg.Client;
  const cipher = new ValueCipher(generateRootKey());
  const engines: PgEngine[] = [];

  const node = async (options: Partial<VaultOptions> = {}): Promise<{ engine: PgEngine; vault: Vault<PgEngine> }> => {
    const opened = await openTestNode(db.url, cipher, 4, Object.assign({ now: () => NOW }, options), { groupCommit: true });
    engines.push(opened.engine);
    return opened;
  };
  const call = async (vault: Vault<PgEngine>, method: string, path: string, body?: unknown): Promise<Response> =>
    vault.app.request(path, {
      method,
      headers: { authorization: `Bearer ${MASTER_KEY}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const count = async (sql: string, values: unknown[]): Promise<number> =>
    Number((await admin.query<{ n: string }>(sql, values)).rows[0]?.n ?? 0);

  beforeAll(async () => {
    db = await createTestDatabase();
    admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
  });

  afterAll(async () => {
    for (const engine of engines) await engine.close();
    await admin?.end();
    await db?.drop();
  });

  it("lets exactly one of many concurrent creates at the free-tier limit - 1 through, on two nodes (402 for the rest)", async () => {
    const limited = { activeLimit: () => 5 };
    const a = (await node(limited)).vault;
    const b = (await node(limited)).vault;
    for (let i = 0; i < 4; i++) expect((await call(a, "POST", "/secrets", { key: `limit/seed-${i}`, value: "v" })).status).toBe(201);
    const answers = await Promise.all(
      Array.from({ length: 16 }, (_, i) => call(i % 2 === 0 ? a : b, "POST", "/secrets", { key: `limit/race-${i}`, value: "v" })),
    );
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 402)).toHaveLength(15);
    expect(await count("SELECT count(*) AS n FROM secrets WHERE starts_with(key, 'limit/race-')", [])).toBe(1);
    for (const e of engines.splice(0)) await e.close();
  });

  it("fails only the unit whose statement failed mid-batch: the other creates commit, nothing of the failed one is visible", async () => {
    const { vault } = await node();
    expect((await call(vault, "POST", "/secrets", { key: "dup/taken", value: "first" })).status).toBe(201);
    const keys = Array.from({ length: 12 }, (_, i) => (i === 5 ? "dup/taken" : `dup/${i}`));
    const answers = await Promise.all(keys.map((key) => call(vault, "POST", "/secrets", { key, value: "v" })));
    expect(answers.map((r) => r.status)).toEqual(keys.map((key) => (key === "dup/taken" ? 409 : 201)));
    expect(await count("SELECT count(*) AS n FROM secrets WHERE starts_with(key, 'dup/')", [])).toBe(12);
    expect(await count("SELECT count(*) AS n FROM audit WHERE action = 'secret.created' AND key = 'dup/taken'", [])).toBe(1);
    const read = await call(vault, "GET", "/secrets/dup/taken");
    expect(((await read.json()) as { value: string }).value).toBe("first");
  });

  it("never answers a reader with a value that a later failure of its batch undid", async () => {
    const { engine } = await node();
    const original = Buffer.from("original envelope");
    await engine.tx.run(async (w) => {
      await w.secrets.insert(Object.assign(storeSecret("undo/x", NOW), { ciphertext: original }));
    });
    const id = await engine.tx.run(async (w) => (await w.secrets.live("global", "undo/x"))?.id ?? 0);
    // In one batch: a replace that then fails, and readers of the same row after it.
    const failing = engine.tx.run(async (w) => {
      const replaced = await w.secrets.replace(
        id,
        { ciphertext: Buffer.from("undone envelope"), valueVersion: 2, expiresAt: null, maxReads: null, burnOnLimit: true, allowedKeys: null },
        NOW,
      );
      expect(replaced?.valueVersion).toBe(2);
      throw new Error("the replace's unit fails after its write");
    });
    const readers = Array.from({ length: 6 }, () =>
      engine.tx.run(async (w) => {
        await Promise.resolve();
        return (await w.secrets.live("global", "undo/x"))?.ciphertext?.toString();
      }),
    );
    await expect(failing).rejects.toThrow("the replace's unit fails after its write");
    expect(await Promise.all(readers)).toEqual(Array.from({ length: 6 }, () => "original envelope"));
  });

  it("burns a secret exactly once when two nodes' batches race for its reads", async () => {
    const a = (await node()).vault;
    const b = (await node()).vault;
    expect((await call(a, "POST", "/secrets", { key: "race/burn", value: "v", max_reads: 3 })).status).toBe(201);
    const reads = await Promise.all(Array.from({ length: 40 }, (_, i) => call(i % 2 === 0 ? a : b, "GET", "/secrets/race/burn")));
    const statuses = reads.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(3);
    expect(statuses.filter((s) => s === 404)).toHaveLength(37);
    expect(await count("SELECT count(*) AS n FROM audit WHERE action = 'secret.burned' AND key = $1", ["race/burn"])).toBe(1);
    expect(await count("SELECT count(*) AS n FROM audit WHERE action = 'secret.read' AND key = $1", ["race/burn"])).toBe(3);
    expect(await count("SELECT count(*) AS n FROM secrets WHERE key = $1", ["race/burn"])).toBe(0);
  });
});
