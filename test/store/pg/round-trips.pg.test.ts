import type pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ValueCipher, generateRootKey } from "../../../src/crypto/cipher.js";
import type { PgEngine } from "../../../src/store/pg/index.js";
import type { Vault } from "../../../src/assembly/vault.js";
import { MASTER_KEY } from "../../support/helpers.js";
import { createTestDatabase, describePg, openTestNode } from "../../support/pg-database.js";
import type { TestDatabase } from "../../support/pg-database.js";

// The round trips a request costs on PostgreSQL (docs/performance.md, "PostgreSQL"): the client
// waits for the server once per round trip, and statements sent while others are still in flight
// (the pool's connections are pipelined) share one. Counted on the client: a statement sent while
// none of its connection's statements is outstanding starts a new round trip.

const NOW = Date.UTC(2026, 0, 1);

/** The text of a statement as client.query received it (a string or a query config). */
function textOf(arg: unknown): string {
  if (typeof arg === "string") return arg;
  return (arg as { text?: string } | null)?.text ?? "";
}

/**
 * Counts the round trips of every pooled connection from now on, and keeps
 * the statements each round trip carried (in the order they were sent).
 */
function countRoundTrips(pool: pg.Pool): { trips: () => number; reset: () => void; log: () => string[][] } {
  let trips = 0;
  let log: string[][] = [];
  const wrapped = new WeakSet<pg.PoolClient>();
  pool.on("acquire", (client) => {
    if (wrapped.has(client)) return;
    wrapped.add(client);
    let outstanding = 0;
    const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
    const counted = (...args: unknown[]): Promise<unknown> => {
      if (outstanding === 0) {
        trips++;
        log.push([]);
      }
      log[log.length - 1]?.push(textOf(args[0]));
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
  return {
    trips: () => trips,
    reset: () => {
      trips = 0;
      log = [];
    },
    log: () => log,
  };
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

  it("a GET of a secret costs two round trips: BEGIN, the subscribers and the counted read; the audit row with COMMIT", async () => {
    expect((await call("POST", "/secrets", { key: "rt/get", value: "v" })).status).toBe(201);
    await tripsOf("GET", "/secrets/rt/get"); // the statements' first use prepares them: not counted
    const read = await tripsOf("GET", "/secrets/rt/get");
    expect(read.status).toBe(200);
    expect(read.trips).toBe(2);
  });

  it("a GET locks the secret's row last: the counted read ends its round trip, and the next one is the COMMIT's", async () => {
    expect((await call("POST", "/secrets", { key: "rt/last", value: "v" })).status).toBe(201);
    await tripsOf("GET", "/secrets/rt/last");
    const read = await tripsOf("GET", "/secrets/rt/last");
    expect(read.status).toBe(200);
    const trips = counter.log();
    const at = trips.findIndex((trip) => trip.some((text) => /^\s*UPDATE secrets SET read_count/.test(text)));
    expect(at).toBeGreaterThanOrEqual(0);
    // Nothing is sent after the UPDATE in its own round trip: it is the last statement the server runs before the node answers.
    expect(trips[at]?.at(-1)).toMatch(/^\s*UPDATE secrets SET read_count/);
    // One round trip more holds the row: the one that ends with COMMIT.
    expect(trips.length).toBe(at + 2);
    expect(trips[at + 1]?.at(-1)).toBe("COMMIT");
  });

  it("a POST of a public secret costs two round trips: BEGIN, the subscribers and the INSERT; the audit row with COMMIT", async () => {
    await tripsOf("POST", "/secrets", { value: "warm" });
    const created = await tripsOf("POST", "/secrets", { value: "v" });
    expect(created.status).toBe(201);
    expect(created.trips).toBe(2);
  });

  it("a POST of a keyed secret adds only the key's lookup", async () => {
    await tripsOf("POST", "/secrets", { key: "rt/warm", value: "v" });
    const created = await tripsOf("POST", "/secrets", { key: "rt/keyed", value: "v" });
    expect(created.status).toBe(201);
    expect(created.trips).toBe(3);
  });
});
