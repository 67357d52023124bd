import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ValueCipher, generateRootKey } from "../../../src/crypto/cipher.js";
import type { PgEngine } from "../../../src/store/pg/index.js";
import type { Vault } from "../../../src/assembly/vault.js";
import { MASTER_KEY } from "../../support/helpers.js";
import { createTestDatabase, describePg, openTestNode } from "../../support/pg-database.js";
import type { TestDatabase } from "../../support/pg-database.js";

// The hot-path statements run as named prepared statements (store/pg/batch/prepared.ts), on a real
// server: they are prepared on the connection, and a column that a later schema version adds
// while they are cached changes nothing for this node.

const NOW = Date.UTC(2026, 0, 1);

describePg("prepared statements on the PostgreSQL engine", () => {
  let db: TestDatabase;
  let engine: PgEngine;
  let vault: Vault<PgEngine>;
  let admin: pg.Client;

  const call = (method: string, path: string, body?: unknown, token = MASTER_KEY) =>
    vault.app.request(path, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  /** The statements prepared on the pool's one connection (pg_prepared_statements is per session). */
  const preparedOnConnection = async (): Promise<string[]> =>
    engine.tx.runOnClient(async (_w, client) => {
      const r = await client.query<{ name: string }>("SELECT name FROM pg_prepared_statements ORDER BY name");
      return r.rows.map((row) => row.name);
    });

  beforeAll(async () => {
    db = await createTestDatabase();
    // One connection: every request below runs on it, so its prepared statements are the ones we see.
    ({ engine, vault } = await openTestNode(db.url, new ValueCipher(generateRootKey()), 1, { now: () => NOW }));
    admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
  });

  afterAll(async () => {
    await admin?.end();
    await engine?.close();
    await db?.drop();
  });

  it("prepares the create, counted read, burn, audit, subscriber and scoped-key statements once on the connection", async () => {
    expect(await preparedOnConnection()).toEqual([]);
    const key = (await (await call("POST", "/keys", { name: "reader", permissions: ["read"] })).json()) as { token: string };
    for (let i = 0; i < 3; i++) {
      expect((await call("POST", "/secrets", { key: `app/${i}`, value: `v${i}`, max_reads: 1 })).status).toBe(201);
      const read = await call("GET", `/secrets/app/${i}`, undefined, key.token);
      expect(read.status).toBe(200);
      expect(((await read.json()) as { value: string }).value).toBe(`v${i}`);
      expect((await call("GET", `/secrets/app/${i}`)).status).toBe(404); // burnt at its one read
    }
    expect(await preparedOnConnection()).toEqual(
      expect.arrayContaining([
        "audit.append",
        "scoped_keys.by_token_hash",
        "scoped_keys.touch",
        "secrets.counted_read",
        "secrets.insert",
        "secrets.live",
        "webhooks.subscribers",
      ]),
    );
  });

  it("prepares nothing with preparedStatements: false (VAULT_DATABASE_PREPARED_STATEMENTS), and answers the same", async () => {
    const off = await openTestNode(db.url, new ValueCipher(generateRootKey()), 1, { now: () => NOW }, { preparedStatements: false });
    try {
      const send = (method: string, path: string, body?: unknown) =>
        off.vault.app.request(path, {
          method,
          headers: { authorization: `Bearer ${MASTER_KEY}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      expect((await send("POST", "/secrets", { key: "unnamed/1", value: "plain", max_reads: 1 })).status).toBe(201);
      expect(await (await send("GET", "/secrets/unnamed/1")).json()).toMatchObject({ key: "unnamed/1", value: "plain", read_count: 1 });
      expect((await send("GET", "/secrets/unnamed/1")).status).toBe(404);
      const names = await off.engine.tx.runOnClient(async (_w, client) => {
        const r = await client.query<{ name: string }>("SELECT name FROM pg_prepared_statements");
        return r.rows.map((row) => row.name);
      });
      expect(names).toEqual([]);
    } finally {
      await off.engine.close();
    }
  });

  it("keeps working, with the same answers, after another node's migration adds columns to the tables it reads", async () => {
    const key = (await (await call("POST", "/keys", { name: "reader 2", permissions: ["read"] })).json()) as { token: string };
    expect((await call("POST", "/secrets", { key: "before", value: "one" })).status).toBe(201);
    expect((await call("GET", "/secrets/before", undefined, key.token)).status).toBe(200);

    // What a newer build's migration could do while this node runs with its statements cached.
    await admin.query("ALTER TABLE secrets ADD COLUMN later_note text NOT NULL DEFAULT 'new'");
    await admin.query("ALTER TABLE scoped_keys ADD COLUMN later_note text");
    await admin.query("ALTER TABLE audit ADD COLUMN later_note text");

    const read = await call("GET", "/secrets/before", undefined, key.token);
    expect(read.status).toBe(200);
    expect(await read.json()).toEqual({
      key: "before",
      value: "one",
      created_at: NOW / 1000,
      expires_at: null,
      max_reads: null,
      read_count: 2,
    });
    const created = await call("POST", "/secrets", { key: "after", value: "two" });
    expect(created.status).toBe(201);
    expect(await created.json()).not.toHaveProperty("later_note");
    expect(((await (await call("GET", "/secrets/after")).json()) as { value: string }).value).toBe("two");
  });
});
