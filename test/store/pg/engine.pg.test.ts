import type pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { generateRootKey, ValueCipher } from "../../../src/crypto/cipher.js";
import { migratePg, openPgPool, redactUrl } from "../../../src/store/pg/index.js";
import { CLAIM_LEASE_MS } from "../../../src/store/pg/outbox.js";
import { verifyPgAuditChains } from "../../../src/store/pg/audit/verify.js";
import { pgSchemaSections } from "../../../src/store/pg/migrate.js";
import type { Transport } from "../../../src/webhooks/transport.js";
import type { PgEngine } from "../../../src/store/pg/index.js";
import type { VaultOptions } from "../../../src/assembly/vault.js";
import type { Vault } from "../../../src/assembly/vault.js";
import { createTestDatabase, describePg, openTestNode } from "../../support/pg-database.js";
import type { TestDatabase } from "../../support/pg-database.js";
import { MASTER_KEY } from "../../support/helpers.js";

// The PostgreSQL engine on a real server: its schema and migration, and the
// rules that must hold across nodes (two vault nodes = two pools and two
// engines on one database, as two processes would have).

const NOW = Date.UTC(2026, 0, 1);

const node = (db: TestDatabase, cipher: ValueCipher) => openTestNode(db.url, cipher, 8, { now: () => NOW });

const call = (v: Vault<PgEngine>, method: string, path: string, body?: unknown) =>
  v.app.request(path, {
    method,
    headers: { authorization: `Bearer ${MASTER_KEY}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

describePg("the PostgreSQL schema and its migration", () => {
  let db: TestDatabase;
  let pool: pg.Pool;

  beforeAll(async () => {
    db = await createTestDatabase();
    pool = await openPgPool({ url: db.url, poolSize: 4 });
  });
  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  it("two nodes migrating at once apply each version once; a second run is a no-op", async () => {
    const other = await openPgPool({ url: db.url, poolSize: 2 });
    const [a, b] = await Promise.all([migratePg(pool), migratePg(other)]);
    await other.end();
    // Every section of schema-pg.sql once, in order, whichever node applied it.
    expect([...a, ...b].sort((x, y) => x - y)).toEqual(pgSchemaSections().map((s) => s.version));
    expect(await migratePg(pool)).toEqual([]);
    const tables = await pool.query<{ t: string }>("SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' ORDER BY 1");
    expect(tables.rows.map((r) => r.t)).toEqual(
      expect.arrayContaining(["audit", "audit_chains", "meta", "orgs", "principal_keys", "principals", "roles", "schema_migrations", "scoped_keys", "secrets", "webhook_attempts", "webhook_deliveries", "webhook_events", "webhooks"]),
    );
  });

  it("refuses a database written by a newer build", async () => {
    const newer = await createTestDatabase();
    const p = await openPgPool({ url: newer.url, poolSize: 1 });
    try {
      await migratePg(p);
      await p.query("INSERT INTO schema_migrations (version, applied_at) VALUES (99, 0)");
      await expect(migratePg(p)).rejects.toThrow(/newer than this ephemeral-vault/);
    } finally {
      await p.end();
      await newer.drop();
    }
  });

  it("makes the audit table append-only in the database itself", async () => {
    await migratePg(pool);
    await pool.query(
      "INSERT INTO audit (scope, at, action, chain, seq, hash) VALUES ('global', 1, 'test', 'c', 1, 'h')",
    );
    await expect(pool.query("UPDATE audit SET action = 'x'")).rejects.toThrow(/append-only/);
    await expect(pool.query("DELETE FROM audit")).rejects.toThrow(/append-only/);
    await expect(pool.query("TRUNCATE audit")).rejects.toThrow(/append-only/);
  });

  it("parses bigint to numbers and never shows the password in its errors", async () => {
    const r = await pool.query<{ n: number }>("SELECT 9007199254740991::bigint AS n");
    expect(r.rows[0]?.n).toBe(9_007_199_254_740_991);
    expect(redactUrl("postgres://vault:s3cret@db.example:5432/vault?sslmode=require")).toBe(
      "postgres://vault:***@db.example:5432/vault?sslmode=require",
    );
    const bad = new URL(db.url);
    bad.password = "wrong-password";
    const err = await openPgPool({ url: bad.toString(), poolSize: 1 }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.message).toMatch(/cannot reach the database/);
    expect(err?.message).not.toContain("wrong-password");
  });
});

describePg("two vault nodes on one PostgreSQL database", () => {
  let db: TestDatabase;
  let a: { engine: PgEngine; vault: Vault<PgEngine> };
  let b: { engine: PgEngine; vault: Vault<PgEngine> };
  const cipher = new ValueCipher(generateRootKey());

  beforeAll(async () => {
    db = await createTestDatabase();
    a = await node(db, cipher);
    b = await node(db, cipher);
  });
  afterAll(async () => {
    await a?.engine.close();
    await b?.engine.close();
    await db?.drop();
  });

  it("answers the secret lifecycle over HTTP exactly as on SQLite", async () => {
    expect((await call(a.vault, "POST", "/secrets", { key: "db/pass", value: "hunter2", max_reads: 2 })).status).toBe(201);
    const read = await call(b.vault, "GET", "/secrets/db/pass");
    expect(read.status).toBe(200);
    expect(await read.json()).toMatchObject({ key: "db/pass", value: "hunter2", read_count: 1, max_reads: 2 });
    expect((await call(a.vault, "HEAD", "/secrets/db/pass")).status).toBe(200);
    expect((await call(a.vault, "GET", "/secrets/db/pass")).status).toBe(200);
    expect((await call(b.vault, "GET", "/secrets/db/pass")).status).toBe(404); // burned
    const list = (await (await call(b.vault, "GET", "/secrets")).json()) as { secrets: unknown[] };
    expect(JSON.stringify(list)).not.toContain("hunter2");
  });

  it("burns exactly once across nodes: 20 readers on two nodes race for 3 reads", async () => {
    expect((await call(a.vault, "POST", "/secrets", { key: "race", value: "v", max_reads: 3 })).status).toBe(201);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => call(i % 2 === 0 ? a.vault : b.vault, "GET", "/secrets/race")),
    );
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(3);
    expect(statuses.filter((s) => s === 404)).toHaveLength(17);
  });

  it("gives one 201 and one 409 when two nodes create the same key at once", async () => {
    for (let i = 0; i < 5; i++) {
      const [x, y] = await Promise.all([
        call(a.vault, "POST", "/secrets", { key: `dup-${i}`, value: "1" }),
        call(b.vault, "POST", "/secrets", { key: `dup-${i}`, value: "2" }),
      ]);
      expect([x.status, y.status].sort()).toEqual([201, 409]);
    }
  });

  it("keeps org, principal and role names unique under concurrent creates on both nodes", async () => {
    const [x, y] = await Promise.all([call(a.vault, "POST", "/orgs", { name: "acme" }), call(b.vault, "POST", "/orgs", { name: "acme" })]);
    expect([x.status, y.status].sort()).toEqual([201, 409]);
    const org = ((await (x.status === 201 ? x : y).json()) as { id: string }).id;
    const [p, q] = await Promise.all([
      call(a.vault, "POST", `/orgs/${org}/principals`, { name: "ci", role: "reader" }),
      call(b.vault, "POST", `/orgs/${org}/principals`, { name: "ci", role: "reader" }),
    ]);
    expect([p.status, q.status].sort()).toEqual([201, 409]);
    const [r, s] = await Promise.all([
      call(a.vault, "POST", `/orgs/${org}/roles`, { name: "ops", permissions: "rR" }),
      call(b.vault, "POST", `/orgs/${org}/roles`, { name: "ops", permissions: "rR" }),
    ]);
    expect([r.status, s.status].sort()).toEqual([201, 409]);
  });

  it("authenticates a scoped key made on one node on the other, and audits both in per-writer chains", async () => {
    const made = await call(a.vault, "POST", "/keys", { name: "ci", permissions: ["read", "write"] });
    expect(made.status).toBe(201);
    const { token } = (await made.json()) as { token: string };
    const res = await b.vault.app.request("/secrets", {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ key: "by-key", value: "v" }),
    });
    expect(res.status).toBe(201);
    const audit = (await (await call(a.vault, "GET", "/audit?limit=1000")).json()) as { entries: { action: string; actor: string | null }[] };
    expect(audit.entries.map((e) => e.action)).toEqual(expect.arrayContaining(["key.created", "secret.created", "secret.burned"]));
    // Every chain links up: each row's seq follows its chain predecessor's, and the head row agrees.
    const chains = await a.engine.pool.query<{ chain: string; n: number; max: number; head: number }>(
      `SELECT a.chain, count(*)::integer AS n, max(a.seq)::integer AS max, c.seq::integer AS head
       FROM audit a JOIN audit_chains c ON c.chain = a.chain GROUP BY a.chain, c.seq`,
    );
    expect(chains.rows.length).toBeGreaterThan(1);
    for (const c of chains.rows) expect([c.n, c.max]).toEqual([c.head, c.head]);
  });

  it("keeps every chain verifiable when units of work that wrote audit rows roll back", async () => {
    const entry = { scope: "global", action: "test.row", key: null, actor: "master", principalId: null, ip: null };
    for (let i = 0; i < 12; i++) {
      const v = i % 2 === 0 ? a.vault : b.vault;
      const failing = v.tx.run(async (w) => {
        await v.audit.record(w, entry);
        throw new Error("rolled back");
      });
      await expect(failing).rejects.toThrow("rolled back");
      await v.tx.run((w) => v.audit.record(w, entry));
    }
    const report = await verifyPgAuditChains(a.engine.pool, cipher.auditChainKeys());
    expect(report).toMatchObject({ ok: true });
    const rows = await a.engine.pool.query<{ n: number }>("SELECT count(*)::integer AS n FROM audit WHERE action = 'test.row'");
    expect(rows.rows[0]?.n).toBe(12);
  });

  it("expires a due secret once when both nodes sweep", async () => {
    expect((await call(a.vault, "POST", "/secrets", { key: "ttl", value: "v", ttl_seconds: 1 })).status).toBe(201);
    const later = { origin: { actor: null, principalId: null, ip: null } };
    // The clock of both nodes is fixed; expire by moving the row's expiry into the past.
    await a.engine.pool.query("UPDATE secrets SET expires_at = 0 WHERE key = 'ttl'");
    const [x, y] = await Promise.all([
      a.vault.tx.run((w) => a.vault.secrets.expireDue(w, 100, later.origin)),
      b.vault.tx.run((w) => b.vault.secrets.expireDue(w, 100, later.origin)),
    ]);
    expect(x + y).toBe(1);
    const expired = await a.engine.pool.query("SELECT 1 FROM audit WHERE action = 'secret.expired' AND key = 'ttl'");
    expect(expired.rowCount).toBe(1);
  });
});

describePg("cross-node limits and leases", () => {
  let db: TestDatabase;
  const cipher = new ValueCipher(generateRootKey());
  const engines: PgEngine[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    for (const e of engines) await e.close();
    await db?.drop();
  });

  /** A node with its own clock (ms) and options. */
  async function nodeWith(extra: Partial<VaultOptions>, clock: { now: number }): Promise<Vault<PgEngine>> {
    const { engine, vault } = await openTestNode(db.url, cipher, 6, Object.assign({ now: () => clock.now }, extra));
    engines.push(engine);
    return vault;
  }

  it("lets exactly one of many concurrent creates on two nodes take the last free-tier slot (402 for the rest)", async () => {
    const clock = { now: NOW };
    const a = await nodeWith({ activeLimit: () => 3 }, clock);
    const b = await nodeWith({ activeLimit: () => 3 }, clock);
    for (const key of ["one", "two"]) expect((await call(a, "POST", "/secrets", { key: `limit-${key}`, value: "v" })).status).toBe(201);
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => call(i % 2 === 0 ? a : b, "POST", "/secrets", { key: `limit-race-${i}`, value: "v" })),
    );
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((x) => x === 201)).toHaveLength(1);
    expect(statuses.filter((x) => x === 402)).toHaveLength(11);
  });

  it("leaves a delivery claimed by a node that died to another node once its lease has run out, sent once", async () => {
    const clock = { now: NOW };
    const sent: string[] = [];
    const hang: Transport = { send: () => new Promise(() => {}), close: () => {} };
    const ok: Transport = {
      send: async (req) => {
        sent.push((JSON.parse(req.body) as { type: string }).type);
        return { ok: true, httpStatus: 200 };
      },
      close: () => {},
    };
    const dying = await nodeWith({ webhooks: { allowPrivate: true, transport: hang, secret: "lease-test-secret-0123456789" } }, clock);
    const survivor = await nodeWith({ webhooks: { allowPrivate: true, transport: ok, secret: "lease-test-secret-0123456789" } }, clock);
    expect((await call(dying, "POST", "/webhooks", { url: "https://127.0.0.1/lease", events: ["secret.created"] })).status).toBe(201);
    expect((await call(dying, "POST", "/secrets", { key: "leased", value: "v" })).status).toBe(201);
    // The dying node claims the delivery; its attempt never ends (the node is gone).
    void dying.webhooks.worker.tick();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await survivor.webhooks.worker.tick()).toBe(0);
    clock.now += CLAIM_LEASE_MS + 1;
    expect(await survivor.webhooks.worker.tick()).toBe(1);
    expect(sent).toEqual(["secret.created"]);
    expect(await survivor.webhooks.worker.tick()).toBe(0);
  });

  it("sends each delivery once, in order per webhook, when two nodes claim at the same moment, round after round", async () => {
    const clock = { now: NOW };
    const sent: string[] = [];
    const transport: Transport = {
      send: async (req) => {
        sent.push(`${new URL(req.url).pathname} ${(JSON.parse(req.body) as { data: { key: string } }).data.key}`);
        await new Promise((resolve) => setTimeout(resolve, 2));
        return { ok: true, httpStatus: 200 };
      },
      close: () => {},
    };
    const settings = { allowPrivate: true, transport, secret: "race-test-secret-0123456789" };
    const a = await nodeWith({ webhooks: settings }, clock);
    const b = await nodeWith({ webhooks: settings }, clock);
    for (const path of ["/one", "/two", "/three"]) {
      expect((await call(a, "POST", "/webhooks", { url: `https://127.0.0.1${path}`, events: ["secret.created"] })).status).toBe(201);
    }
    const keys = Array.from({ length: 15 }, (_, i) => `race-hook-${String(i).padStart(2, "0")}`);
    for (const key of keys) expect((await call(i2(key) ? a : b, "POST", "/secrets", { key, value: "v" })).status).toBe(201);
    for (let round = 0; round < 30; round++) {
      const [x, y] = await Promise.all([a.webhooks.worker.tick(), b.webhooks.worker.tick()]);
      if (x + y === 0 && sent.length >= keys.length * 3) break;
    }
    for (const path of ["/one", "/two", "/three"]) {
      expect(sent.filter((line) => line.startsWith(`${path} `)).map((line) => line.split(" ")[1])).toEqual(keys);
    }
  });
});

/** Which node creates a key: alternate, so both nodes queue events. */
function i2(key: string): boolean {
  return Number(key.slice(-2)) % 2 === 0;
}
