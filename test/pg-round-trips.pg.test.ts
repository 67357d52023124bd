import type pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ValueCipher, generateRootKey } from "../src/crypto/cipher.js";
import type { PgEngine } from "../src/store/pg/index.js";
import type { Vault } from "../src/vault.js";
import { MASTER_KEY } from "./helpers.js";
import { createTestDatabase, describePg, openTestNode } from "./pg-database.js";
import type { TestDatabase } from "./pg-database.js";

// The round trips a request costs on PostgreSQL (docs/performance.md, "PostgreSQL"): the client
// waits for the server once per round trip, and statements sent while others are still in flight
// (the pool's connections are pipelined) share one. Counted on the client: a statement sent while
// none of its connection's statements is outstanding starts a new round trip.

const NOW = Date.UTC(2026, 0, 1);

/** Counts the round trips of every pooled connection from now on. */
function countRoundTrips(pool: pg.Pool): { trips: () => number; reset: () => void } {
  let trips = 0;
  const wrapped = new WeakSet<pg.PoolClient>();
  pool.on("acquire", (client) => {
    if (wrapped.has(client)) return;
    wrapped.add(client);
    let outstanding = 0;
    const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
    const counted = (...args: unknown[]): Promise<unknown> => {
      if (outstanding === 0) trips++;
      outstanding++;
      const settle = () => {
        outstanding--;
      };
      const result = query(...args);
      result.then(settle, settle);
      return result;
    };
    (client as unknown as { query: typeof counted }).query = counted;
  });
  return { trips: () => trips, reset: () => void (trips = 0) };
}

describePg("round trips per request on PostgreSQL", () => {
  let db: TestDatabase;
  let engine: PgEngine;
  let vault: Vault<PgEngine>;
  let counter: ReturnType<typeof countRoundTrips>;

  const call = (method: string, path: string, body?: unknown) =>
    vault.app.request(path, {
      method,
      headers: { authorization: `Bearer ${MASTER_KEY}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  /** The round trips of one request, run alone. */
  const tripsOf = async (method: string, path: string, body?: unknown): Promise<{ status: number; trips: number }> => {
    counter.reset();
    const res = await call(method, path, body);
    await res.arrayBuffer();
    return { status: res.status, trips: counter.trips() };
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    ({ engine, vault } = await openTestNode(db.url, new ValueCipher(generateRootKey()), 2, { now: () => NOW }));
    counter = countRoundTrips(engine.pool);
  });

  afterAll(async () => {
    await engine?.close();
    await db?.drop();
  });

  it("a GET of a secret costs three round trips: BEGIN with the counted read, the audit row with the subscribers, COMMIT", async () => {
    expect((await call("POST", "/secrets", { key: "rt/get", value: "v" })).status).toBe(201);
    await tripsOf("GET", "/secrets/rt/get"); // the statements' first use prepares them: not counted
    const read = await tripsOf("GET", "/secrets/rt/get");
    expect(read.status).toBe(200);
    expect(read.trips).toBe(3);
  });

  it("a POST of a public secret costs three round trips: BEGIN with the INSERT, the audit row with the subscribers, COMMIT", async () => {
    await tripsOf("POST", "/secrets", { value: "warm" });
    const created = await tripsOf("POST", "/secrets", { value: "v" });
    expect(created.status).toBe(201);
    expect(created.trips).toBe(3);
  });

  it("a POST of a keyed secret adds only the key's lookup", async () => {
    await tripsOf("POST", "/secrets", { key: "rt/warm", value: "v" });
    const created = await tripsOf("POST", "/secrets", { key: "rt/keyed", value: "v" });
    expect(created.status).toBe(201);
    expect(created.trips).toBe(4);
  });
});
