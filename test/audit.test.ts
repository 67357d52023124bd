import { mkdtempSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve } from "@hono/node-server";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { auditCommand } from "../src/cli/audit-commands.js";
import { FailedAuthLimiter } from "../src/http/failed-auth.js";
import { ValueCipher, generateRootKey } from "../src/crypto/cipher.js";
import { openDatabase } from "../src/store/sqlite/db.js";
import { verifyAuditChain } from "../src/store/sqlite/audit-verify.js";
import { createLogger } from "../src/log/log.js";
import { SqliteAuditStore } from "../src/store/sqlite/audit.js";
import { buildSqliteTestVault, buildTestVault, createKey, createSqliteVault, itSqlite, MASTER_KEY } from "./helpers.js";
import type { TestVault } from "./helpers.js";

interface Entry {
  id: string;
  timestamp: number;
  action: string;
  key: string | null;
  actor: string | null;
  ip: string | null;
}

async function entries(v: TestVault, query = "", token?: string): Promise<Entry[]> {
  const res = await v.request("GET", `/audit${query}`, { token });
  expect(res.status).toBe(200);
  return ((await res.json()) as { entries: Entry[] }).entries;
}

/** Actions oldest first, for readability. */
async function actions(v: TestVault, query = ""): Promise<string[]> {
  return (await entries(v, query)).map((e) => e.action).reverse();
}

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

describe("what the audit log records (docs/contract.md §11)", () => {
  it("records every secret operation with the actor, never a value", async () => {
    const v = buildTestVault();
    await v.asMaster("POST", "/secrets", { key: "db", value: "VALUE-ONE", max_reads: 2 });
    await v.asMaster("GET", "/secrets/db");
    await v.asMaster("PATCH", "/secrets/db", { max_reads: 1 });
    await v.asMaster("GET", "/secrets/db"); // reaches max_reads: burns
    await v.asMaster("POST", "/secrets", { key: "tmp", value: "VALUE-TWO" });
    await v.asMaster("DELETE", "/secrets/tmp");
    await v.asMaster("POST", "/secrets", { key: "ttl", value: "VALUE-THREE", ttl_seconds: 5 });
    v.clock.advance(5_000);
    await v.asMaster("GET", "/secrets/ttl"); // past its TTL: expired by the read
    await v.asMaster("POST", "/prune");

    expect(await actions(v)).toEqual([
      "secret.created",
      "secret.read",
      "secret.updated",
      "secret.read",
      "secret.burned",
      "secret.created",
      "secret.deleted",
      "secret.created",
      "secret.expired",
      "secret.pruned",
    ]);
    const all = await entries(v);
    expect(all.every((e) => e.actor === "master")).toBe(true);
    expect(all.find((e) => e.action === "secret.burned")?.key).toBe("db");
    expect(all.find((e) => e.action === "secret.pruned")?.key).toBeNull();

    const rows = JSON.stringify(await v.query("SELECT * FROM audit"));
    for (const value of ["VALUE-ONE", "VALUE-TWO", "VALUE-THREE"]) expect(rows).not.toContain(value);
  });

  it("records expiries by the sweeper with no actor", async () => {
    const v = buildTestVault();
    await v.asMaster("POST", "/secrets", { key: "ttl", value: "v", ttl_seconds: 1 });
    v.clock.advance(2_000);
    await v.tx.run((w) => v.secrets.expireDue(w, 10, { actor: null, principalId: null, ip: null }));
    const [latest] = await entries(v);
    expect(latest).toMatchObject({ action: "secret.expired", key: "ttl", actor: null, ip: null });
  });

  it("records the public id as the key of a public secret's actions", async () => {
    const v = buildTestVault();
    const { id } = (await (await v.asMaster("POST", "/secrets", { value: "v" })).json()) as { id: string };
    const [created] = await entries(v);
    expect(created).toMatchObject({ action: "secret.created", key: id });
  });

  it("records key.created and key.deleted with the key id", async () => {
    const v = buildTestVault();
    const key = await createKey(v, { permissions: ["read"] });
    await v.asMaster("DELETE", `/keys/${key.id}`);
    const [deleted, created] = await entries(v);
    expect(created).toMatchObject({ action: "key.created", key: key.id, actor: "master" });
    expect(deleted).toMatchObject({ action: "key.deleted", key: key.id, actor: "master" });
    expect(JSON.stringify(await v.query("SELECT * FROM audit"))).not.toContain(key.token);
  });

  it("records every request made with a scoped key, with the key id as actor", async () => {
    const v = buildTestVault();
    await v.asMaster("POST", "/secrets", { key: "app/db", value: "v" });
    const admin = await createKey(v, { permissions: ["admin"] });
    const t = admin.token;
    await v.request("GET", "/secrets/app/db", { token: t });
    await v.request("HEAD", "/secrets/app/db", { token: t });
    await v.request("GET", "/secrets", { token: t });
    await v.request("GET", "/keys", { token: t });
    await v.request("GET", "/secrets/app/missing", { token: t });
    await v.request("POST", "/secrets", { token: t, body: { key: "app/x" } });
    await v.request("GET", "/audit", { token: t });

    const mine = (await entries(v)).filter((e) => e.actor === admin.id).reverse();
    expect(mine.map((e) => [e.action, e.key])).toEqual([
      ["secret.read", "app/db"],
      ["secret.checked", "app/db"],
      ["secret.listed", null],
      ["key.listed", null],
      ["request.failed", "app/missing"],
      ["request.failed", null],
      ["audit.queried", null],
    ]);
  });

  it("does not add a request row for the master key's reads", async () => {
    const v = buildTestVault();
    await v.asMaster("GET", "/secrets");
    await v.asMaster("GET", "/secrets/none");
    expect(await entries(v)).toEqual([]);
  });

  it("records a 401 as auth.failed with the ip and no actor", async () => {
    const v = buildTestVault({ trustProxy: true });
    // The last entry is the one the trusted proxy added; earlier ones are the client's word.
    const res = await v.request("GET", "/secrets/x", { token: "wrong-token", headers: { "x-forwarded-for": "10.0.0.1, 203.0.113.7" } });
    expect(res.status).toBe(401);
    await v.request("GET", "/secrets", { token: null, headers: { "x-forwarded-for": "203.0.113.8" } });
    const [second, first] = await entries(v);
    expect(first).toMatchObject({ action: "auth.failed", key: null, actor: null, ip: "203.0.113.7" });
    expect(second).toMatchObject({ action: "auth.failed", actor: null, ip: "203.0.113.8" });
    expect(JSON.stringify(await v.query("SELECT * FROM audit"))).not.toContain("wrong-token");
  });

  it("records an expired or deleted scoped key's request as auth.failed", async () => {
    const v = buildTestVault();
    const key = await createKey(v, { permissions: ["read"], expires_at: Math.floor(v.clock.now() / 1000) + 1 });
    v.clock.advance(1_000);
    expect((await v.request("GET", "/secrets/x", { token: key.token })).status).toBe(401);
    expect((await entries(v))[0]).toMatchObject({ action: "auth.failed", actor: null });
  });

  it("records a 403 as auth.denied with the actor", async () => {
    const v = buildTestVault({ trustProxy: true });
    const reader = await createKey(v, { permissions: ["read"], prefix: "a/" });
    const headers = { "x-forwarded-for": "198.51.100.4" };
    expect((await v.request("DELETE", "/secrets/a/x", { token: reader.token, headers })).status).toBe(403);
    expect((await v.request("GET", "/secrets/b/x", { token: reader.token, headers })).status).toBe(403);
    const [prefix, permission] = await entries(v);
    expect(permission).toMatchObject({ action: "auth.denied", key: null, actor: reader.id, ip: "198.51.100.4" });
    expect(prefix).toMatchObject({ action: "auth.denied", actor: reader.id });
  });

  it("takes X-Forwarded-For only when VAULT_TRUST_PROXY is set", async () => {
    const v = buildTestVault({ trustProxy: false });
    await v.request("GET", "/secrets", { token: "nope", headers: { "x-forwarded-for": "203.0.113.7" } });
    expect((await entries(v))[0]).toMatchObject({ action: "auth.failed", ip: null });
  });

  it("takes the client ip from the socket, ignoring X-Forwarded-For without VAULT_TRUST_PROXY", async () => {
    const v = buildTestVault({ trustProxy: false });
    const server = await new Promise<Server>((resolve) => {
      const s = serve({ fetch: v.app.fetch, port: 0, hostname: "127.0.0.1" }, () => resolve(s as Server)) as Server;
    });
    cleanups.push(() => server.close());
    const port = (server.address() as AddressInfo).port;
    const res = await fetch(`http://127.0.0.1:${port}/secrets`, {
      headers: { authorization: "Bearer nope", "x-forwarded-for": "203.0.113.9" },
    });
    expect(res.status).toBe(401);
    const [failed] = await entries(v);
    expect(failed?.ip).toMatch(/^(::ffff:)?127\.0\.0\.1$/);
  });
});

describe("GET /audit", () => {
  async function seeded() {
    const v = buildTestVault();
    await v.asMaster("POST", "/secrets", { key: "a", value: "v" }); // t0
    v.clock.advance(10_000);
    await v.asMaster("POST", "/secrets", { key: "b", value: "v" }); // t0 + 10
    await v.asMaster("GET", "/secrets/a");
    v.clock.advance(10_000);
    await v.asMaster("GET", "/secrets/b"); // t0 + 20
    return { v, t0: Math.floor(v.clock.now() / 1000) - 20 };
  }

  it("answers {entries} newest first with {id, timestamp, action, key, actor, ip}", async () => {
    const { v, t0 } = await seeded();
    const res = await v.asMaster("GET", "/audit");
    const body = (await res.json()) as { entries: Entry[]; next_cursor?: string };
    expect(Object.keys(body)).toEqual(["entries"]);
    expect(body.entries[0]).toEqual({ id: expect.any(String), timestamp: t0 + 20, action: "secret.read", key: "b", actor: "master", ip: null });
    expect(body.entries.map((e) => e.timestamp)).toEqual([t0 + 20, t0 + 10, t0 + 10, t0]);
  });

  it("filters by action and key", async () => {
    const { v } = await seeded();
    expect((await entries(v, "?action=secret.created")).map((e) => e.key)).toEqual(["b", "a"]);
    expect((await entries(v, "?key=a")).map((e) => e.action)).toEqual(["secret.read", "secret.created"]);
    expect((await entries(v, "?key=a&action=secret.read")).map((e) => e.key)).toEqual(["a"]);
    expect(await entries(v, "?action=secret.deleted")).toEqual([]);
  });

  it("filters by a public id and by a keyed secret's 64-character key alike", async () => {
    const v = buildTestVault();
    const { id } = (await (await v.asMaster("POST", "/secrets", { value: "v", max_reads: 1 })).json()) as { id: string };
    expect((await v.asMaster("GET", `/secrets/${id}`)).status).toBe(200);
    // Upper-case hex: a keyed secret may take it (only lower-case is reserved for public ids).
    const long = "ABCDEF0123456789".repeat(4);
    expect((await v.asMaster("POST", "/secrets", { key: long, value: "v" })).status).toBe(201);
    expect((await v.asMaster("GET", `/secrets/${long}`)).status).toBe(200);
    expect((await entries(v, `?key=${id}`)).map((e) => e.action)).toEqual(["secret.burned", "secret.read", "secret.created"]);
    expect((await entries(v, `?key=${id}&action=secret.read`)).map((e) => e.key)).toEqual([id]);
    expect((await entries(v, `?key=${long}`)).map((e) => e.action)).toEqual(["secret.read", "secret.created"]);
    expect((await entries(v, `?key=${long}&limit=1`)).map((e) => e.action)).toEqual(["secret.read"]);
  });

  it("takes since inclusive and until exclusive, in seconds", async () => {
    const { v, t0 } = await seeded();
    expect((await entries(v, `?since=${t0 + 10}`)).map((e) => e.timestamp)).toEqual([t0 + 20, t0 + 10, t0 + 10]);
    expect((await entries(v, `?until=${t0 + 10}`)).map((e) => e.timestamp)).toEqual([t0]);
    expect((await entries(v, `?since=${t0 + 10}&until=${t0 + 20}`)).map((e) => e.key)).toEqual(["a", "b"]);
    expect(await entries(v, `?since=${t0 + 21}`)).toEqual([]);
    expect(await entries(v, `?since=${t0 + 20}&until=${t0 + 10}`)).toEqual([]);
  });

  it("pages with limit and next_cursor, without gaps or repeats", async () => {
    const v = buildTestVault();
    for (let i = 0; i < 7; i++) await v.asMaster("POST", "/secrets", { key: `k${i}`, value: "v" });
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const res = await v.asMaster("GET", `/audit?limit=3${cursor ? `&cursor=${cursor}` : ""}`);
      const body = (await res.json()) as { entries: Entry[]; next_cursor?: string };
      seen.push(...body.entries.map((e) => e.key as string));
      cursor = body.next_cursor;
      pages += 1;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(["k6", "k5", "k4", "k3", "k2", "k1", "k0"]);
  });

  it("returns 100 entries by default and at most 1000", async () => {
    const v = buildTestVault();
    await v.tx.run(async (w) => {
      for (let i = 0; i < 101; i++) await v.audit.record(w, { scope: "global", action: "secret.read", key: `k${i}`, actor: "master", principalId: null, ip: null });
    });
    const res = await v.asMaster("GET", "/audit");
    const body = (await res.json()) as { entries: Entry[]; next_cursor?: string };
    expect(body.entries).toHaveLength(100);
    expect(body.next_cursor).toEqual(expect.any(String));
  });

  it.each(["limit=0", "limit=1001", "limit=x", "since=-1", "until=1.5", "action=", "key=", "cursor=bogus"])(
    "answers 400 for %s",
    async (query) => {
      const v = buildTestVault();
      const res = await v.asMaster("GET", `/audit?${query}`);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: expect.any(String) });
    },
  );

  it("keeps org entries out of the global log", async () => {
    const v = buildTestVault();
    await v.tx.run((w) => v.audit.record(w, { scope: "org_x", action: "secret.read", key: "k", actor: "pk_x", principalId: "prn_x", ip: null }));
    expect(await entries(v)).toEqual([]);
    expect((await v.tx.run((w) => v.audit.query(w, "org_x", { limit: 10 }))).entries).toEqual([
      { id: expect.any(String), timestamp: expect.any(Number), action: "secret.read", key: "k", actor: "pk_x", principal_id: "prn_x", ip: null, count: 1 },
    ]);
  });

  it("shows a prefixed admin key only entries within its prefix", async () => {
    const v = buildTestVault();
    await v.asMaster("POST", "/secrets", { key: "a/one", value: "v" });
    await v.asMaster("POST", "/secrets", { key: "b/two", value: "v" });
    const admin = await createKey(v, { permissions: ["admin"], prefix: "a/" });
    const seen = await entries(v, "", admin.token);
    expect(seen.map((e) => e.key)).toEqual(["a/one"]);
    expect((await v.request("GET", "/audit?key=b/two", { token: admin.token })).status).toBe(403);
  });

  itSqlite("answers each query by seeking spans and the table's id ranges: never a scan, never a sort", () => {
    const v = buildSqliteTestVault();
    const statements = (new SqliteAuditStore(v.db, null) as unknown as { q: Record<string, { source: string }> }).q;
    for (const name of ["page", "spanBefore", "firstFrom", "maxId", "last"]) {
      const source = statements[name]?.source;
      expect(source, name).toBeDefined();
      const params = { kind: "a", scope: "global", value: "secret.read", from: 0, lo: 0, hi: 10, action: "secret.read", key: "k", glob: null, limit: 10 };
      const args = name === "page" ? [params] : name === "spanBefore" ? ["k", "global", "k", 5] : name === "firstFrom" ? [0] : [];
      const details = (v.db.prepare(`EXPLAIN QUERY PLAN ${source as string}`).all(...args) as { detail: string }[]).map((p) => p.detail).join("; ");
      expect(details, name).not.toMatch(/SCAN/);
      expect(details, name).not.toMatch(/TEMP B-TREE/);
    }
  });
});

describe("rows buffered per batch", () => {
  const entry = (action: string) => ({ scope: "global", action, key: null, actor: "master", principalId: null, ip: null });

  itSqlite("inserts a batch's rows at its commit, drops those of a rolled-back request, and keeps the chain whole", async () => {
    const v = buildSqliteTestVault();
    const one = v.tx.run((w) => v.audit.record(w, entry("one")));
    const dropped = expect(
      v.tx.run(async (w) => {
        await v.audit.record(w, entry("dropped"));
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    const two = v.tx.run((w) => v.audit.record(w, entry("two")));
    // Not in the table before the batch commits.
    expect(v.db.prepare("SELECT count(*) AS n FROM audit").get()).toEqual({ n: 0 });
    await one;
    await dropped;
    await two;
    const rows = v.db.prepare("SELECT id, action FROM audit ORDER BY id").all();
    expect(rows).toEqual([
      { id: 1, action: "one" },
      { id: 2, action: "two" },
    ]);
    expect(verifyAuditChain(v.db, v.cipher.auditChainKeys())).toEqual(expect.objectContaining({ ok: true, rows: 2 }));
  });

  itSqlite("drops every row of a batch whose commit fails, and chains the next batch to the table", async () => {
    const v = buildSqliteTestVault();
    await v.tx.run((w) => v.audit.record(w, entry("kept")));
    let fail = true;
    v.sqlite.tx.onBeforeCommit(() => {
      if (fail) {
        fail = false;
        throw new Error("disk full");
      }
    });
    await expect(v.tx.run((w) => v.audit.record(w, entry("lost")))).rejects.toThrow("disk full");
    await v.tx.run((w) => v.audit.record(w, entry("after")));
    const rows = v.db.prepare("SELECT id, action FROM audit ORDER BY id").all();
    expect(rows).toEqual([
      { id: 1, action: "kept" },
      { id: 2, action: "after" },
    ]);
    expect(verifyAuditChain(v.db, v.cipher.auditChainKeys())).toEqual(expect.objectContaining({ ok: true, rows: 2 }));
  });
});

describe("append-only and fail-closed", () => {
  itSqlite("refuses UPDATE and DELETE on audit rows in the database itself", async () => {
    const v = buildSqliteTestVault();
    await v.asMaster("POST", "/secrets", { key: "k", value: "v" });
    expect(() => v.db.prepare("UPDATE audit SET action = 'secret.read'").run()).toThrow(/append-only/);
    expect(() => v.db.prepare("DELETE FROM audit").run()).toThrow(/append-only/);
    expect(await actions(v)).toEqual(["secret.created"]);
  });

  itSqlite("does not make a change whose audit row cannot be written", async () => {
    const v = buildSqliteTestVault();
    await v.asMaster("POST", "/secrets", { key: "kept", value: "v" });
    v.db.exec("CREATE TEMP TRIGGER audit_broken BEFORE INSERT ON audit BEGIN SELECT RAISE(ABORT, 'disk says no'); END");
    const create = await v.asMaster("POST", "/secrets", { key: "new", value: "v" });
    expect(create.status).toBe(500);
    expect(await create.json()).toEqual({ error: "internal server error" });
    expect((await v.asMaster("DELETE", "/secrets/kept")).status).toBe(500);
    v.db.exec("DROP TRIGGER audit_broken");
    expect((await v.asMaster("GET", "/secrets/new")).status).toBe(404);
    expect((await v.asMaster("GET", "/secrets/kept")).status).toBe(200);
  });

  itSqlite("does not answer a scoped key's read whose audit row cannot be written", async () => {
    const v = buildSqliteTestVault();
    await v.asMaster("POST", "/secrets", { key: "k", value: "v" });
    const admin = await createKey(v, { permissions: ["admin"] });
    v.db.exec("CREATE TEMP TRIGGER audit_broken BEFORE INSERT ON audit BEGIN SELECT RAISE(ABORT, 'disk says no'); END");
    const list = await v.request("GET", "/secrets", { token: admin.token });
    expect(list.status).toBe(500);
    expect(await list.text()).not.toContain('"k"');
  });
});

describe("the hash chain", () => {
  function tamper(db: Database.Database, sql: string): void {
    db.exec("DROP TRIGGER audit_no_update; DROP TRIGGER audit_no_delete;");
    db.exec(sql);
  }

  itSqlite("verifies an untouched chain", async () => {
    const v = buildSqliteTestVault();
    for (let i = 0; i < 5; i++) await v.asMaster("POST", "/secrets", { key: `k${i}`, value: "v" });
    expect(verifyAuditChain(v.db, v.cipher.auditChainKeys())).toEqual({ ok: true, rows: 5, head: expect.stringMatching(/^[0-9a-f]{64}$/) });
  });

  itSqlite("reports the first row edited through a raw connection", async () => {
    const v = buildSqliteTestVault();
    for (let i = 0; i < 5; i++) await v.asMaster("POST", "/secrets", { key: `k${i}`, value: "v" });
    tamper(v.db, "UPDATE audit SET actor = 'someone-else' WHERE id = 3");
    expect(verifyAuditChain(v.db, v.cipher.auditChainKeys())).toMatchObject({ ok: false, brokenId: 3, rows: 2 });
  });

  itSqlite("reports a row edited with its own hash recomputed at the next row", async () => {
    const v = buildSqliteTestVault();
    for (let i = 0; i < 5; i++) await v.asMaster("POST", "/secrets", { key: `k${i}`, value: "v" });
    tamper(v.db, "UPDATE audit SET hash = '" + "a".repeat(64) + "' WHERE id = 2");
    expect(verifyAuditChain(v.db, v.cipher.auditChainKeys())).toMatchObject({ ok: false, brokenId: 2 });
  });

  itSqlite("reports a removed row and a removed tail", async () => {
    const v = buildSqliteTestVault();
    for (let i = 0; i < 5; i++) await v.asMaster("POST", "/secrets", { key: `k${i}`, value: "v" });
    tamper(v.db, "DELETE FROM audit WHERE id = 5");
    expect(verifyAuditChain(v.db, v.cipher.auditChainKeys())).toMatchObject({ ok: false, brokenId: 5 });
    v.db.exec("DELETE FROM audit WHERE id = 2");
    expect(verifyAuditChain(v.db, v.cipher.auditChainKeys())).toMatchObject({ ok: false, brokenId: 3 });
  });

  itSqlite("chains org and global entries in one table", async () => {
    const v = buildSqliteTestVault();
    await v.asMaster("POST", "/secrets", { key: "g", value: "v" });
    await v.tx.run((w) => v.audit.record(w, { scope: "org_1", action: "secret.created", key: "o", actor: "pk_1", principalId: "prn_1", ip: "10.0.0.1" }));
    await v.asMaster("POST", "/secrets", { key: "g2", value: "v" });
    expect(verifyAuditChain(v.db, v.cipher.auditChainKeys())).toMatchObject({ ok: true, rows: 3 });
    tamper(v.db, "UPDATE audit SET principal_id = 'prn_2' WHERE scope = 'org_1'");
    expect(verifyAuditChain(v.db, v.cipher.auditChainKeys())).toMatchObject({ ok: false, brokenId: 2 });
  });

  itSqlite("ephemeral-vault audit verify --data-dir walks a data dir's chain and names the broken row", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vault-audit-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const db = openDatabase(join(dir, "vault.db"));
    const root = generateRootKey();
    const vault = createSqliteVault(db, {
      cipher: new ValueCipher(root),
      log: createLogger("silent"),
      masterKey: MASTER_KEY,
      now: Date.now,
      activeLimit: () => null,
      publicUrl: "http://vault.test",
      maxValueBytes: 65_536,
      trustProxy: false,
    });
    for (const key of ["one", "two", "three"]) {
      const res = await vault.app.request("/secrets", {
        method: "POST",
        headers: { authorization: `Bearer ${MASTER_KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ key, value: "v" }),
      });
      expect(res.status).toBe(201);
    }
    vault.engine.tx.close();
    db.close();

    const run = async () => {
      let out = "";
      const env = { VAULT_ENCRYPTION_KEY: root.toString("hex") };
      const code = await auditCommand(["verify", "--data-dir", dir], env, { out: (t) => (out += t), err: (t) => (out += t) });
      return { code, out };
    };
    expect(await run()).toEqual({ code: 0, out: expect.stringMatching(/^audit chain intact: 3 rows, head [0-9a-f]{64}\n$/) });

    const raw = new Database(join(dir, "vault.db"));
    tamper(raw, "UPDATE audit SET key = 'forged' WHERE id = 2");
    raw.close();
    const broken = await run();
    expect(broken.code).toBe(1);
    expect(broken.out).toMatch(/^audit chain broken at row 2: /);
  });

  itSqlite("audit verify refuses a directory without a database (usage error)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vault-audit-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    await expect(auditCommand(["verify", "--data-dir", dir], {}, { out: () => {}, err: () => {} })).rejects.toThrow(/no database/);
    await expect(auditCommand(["check"], {}, { out: () => {}, err: () => {} })).rejects.toThrow(/verify/);
  });
});

describe("brute-force guard", () => {
  const from = (ip: string) => ({ "x-forwarded-for": ip });

  it("never counts a direct loopback peer, but counts loopback that only X-Forwarded-For claims", async () => {
    for (const ip of ["127.0.0.1", "::1", "::ffff:127.0.0.1"]) {
      const v = buildTestVault({ trustProxy: true });
      const direct = new FailedAuthLimiter({ limit: 20, windowMs: 60_000, now: v.clock.now });
      for (let i = 0; i < 30; i++) direct.fail(ip, false);
      expect(direct.retryAfterMs(ip, false), ip).toBe(0);
      for (let i = 0; i < 20; i++) {
        expect((await v.request("GET", "/secrets", { token: `wrong-${i}`, headers: from(ip) })).status).toBe(401);
      }
      expect((await v.request("GET", "/secrets", { token: MASTER_KEY, headers: from(ip) })).status, ip).toBe(429);
    }
  });

  it("is on by default for remote clients: the 21st request after 20 failures gets 429", async () => {
    const v = buildTestVault({ trustProxy: true });
    for (let i = 0; i < 20; i++) {
      expect((await v.request("GET", "/secrets", { token: `wrong-${i}`, headers: from("192.0.2.9") })).status).toBe(401);
    }
    expect((await v.request("GET", "/secrets", { token: MASTER_KEY, headers: from("192.0.2.9") })).status).toBe(429);
  });

  it("counts the address the trusted proxy saw, not what the client wrote before it", async () => {
    const v = buildTestVault({ trustProxy: true, authFailLimit: 2 });
    for (let i = 0; i < 2; i++) {
      const spoofed = { "x-forwarded-for": `127.0.0.${i + 1}, 192.0.2.10` };
      expect((await v.request("GET", "/secrets", { token: "wrong", headers: spoofed })).status).toBe(401);
    }
    expect((await v.request("GET", "/secrets", { token: "wrong", headers: from("192.0.2.10") })).status).toBe(429);
  });

  it("answers 429 with Retry-After after VAULT_AUTH_FAIL_LIMIT=20 failed authentications from one ip in 60 s, until the window passes", async () => {
    const v = buildTestVault({ trustProxy: true, authFailLimit: 20 });
    for (let i = 0; i < 20; i++) {
      v.clock.advance(1_000);
      expect((await v.request("GET", "/secrets", { token: `wrong-${i}`, headers: from("192.0.2.1") })).status).toBe(401);
    }
    const blocked = await v.request("GET", "/secrets", { token: MASTER_KEY, headers: from("192.0.2.1") });
    expect(blocked.status).toBe(429);
    expect(blocked.headers.get("retry-after")).toBe("41");
    expect(await blocked.json()).toMatchObject({ error: "too many failed authentications" });

    // Another address is not affected.
    expect((await v.request("GET", "/secrets", { token: MASTER_KEY, headers: from("192.0.2.2") })).status).toBe(200);

    v.clock.advance(40_000);
    expect((await v.request("GET", "/secrets", { token: MASTER_KEY, headers: from("192.0.2.1") })).status).toBe(429);
    v.clock.advance(1_000);
    expect((await v.request("GET", "/secrets", { token: MASTER_KEY, headers: from("192.0.2.1") })).status).toBe(200);
  });

  it("does not block an ip whose failures are spread over more than the window", async () => {
    const v = buildTestVault({ trustProxy: true, authFailLimit: 20 });
    for (let i = 0; i < 40; i++) {
      v.clock.advance(4_000);
      expect((await v.request("GET", "/secrets", { token: "wrong", headers: from("192.0.2.3") })).status).toBe(401);
    }
  });

  it("follows VAULT_AUTH_FAIL_LIMIT and VAULT_AUTH_FAIL_WINDOW_MS, and records no row for a 429", async () => {
    const v = buildTestVault({ trustProxy: true, authFailLimit: 2, authFailWindowMs: 5_000 });
    await v.request("GET", "/secrets", { token: "wrong", headers: from("192.0.2.4") });
    await v.request("GET", "/secrets", { token: "wrong", headers: from("192.0.2.4") });
    const blocked = await v.request("GET", "/secrets", { token: "wrong", headers: from("192.0.2.4") });
    expect(blocked.status).toBe(429);
    expect(blocked.headers.get("retry-after")).toBe("5");
    expect(await actions(v)).toEqual(["auth.failed", "auth.failed"]);
    v.clock.advance(5_000);
    expect((await v.request("GET", "/secrets", { token: "wrong", headers: from("192.0.2.4") })).status).toBe(401);
  });

  it("leaves /health open to a blocked ip", async () => {
    const v = buildTestVault({ trustProxy: true, authFailLimit: 1 });
    await v.request("GET", "/secrets", { token: "wrong", headers: from("192.0.2.5") });
    expect((await v.request("GET", "/secrets", { headers: from("192.0.2.5") })).status).toBe(429);
    expect((await v.request("GET", "/health", { token: null, headers: from("192.0.2.5") })).status).toBe(200);
  });
});

describe("webhook changes made with a scoped key", () => {
  it("leave exactly one audit row each, with the key as actor", async () => {
    const v = buildTestVault({ webhooks: { allowPrivate: true } });
    const admin = await createKey(v, { permissions: ["admin"] });
    const res = await v.request("POST", "/webhooks", {
      token: admin.token,
      body: { url: "https://127.0.0.1:9/hook", events: ["*"] },
    });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    const rows = (await entries(v)).filter((e) => e.actor === admin.id);
    expect(rows.map((e) => [e.action, e.key])).toEqual([["webhook.created", id]]);
  });
});

describe("the audit chain under the group commit", () => {
  const row = (action: string) => ({ scope: "global", action, key: null, actor: "master", principalId: null, ip: null });

  itSqlite("stays whole when a request's savepoint rolls back after writing a row, and its head is the last row", async () => {
    const v = buildSqliteTestVault();
    await v.asMaster("POST", "/secrets", { key: "a", value: "v" });
    const failing = v.tx.run(async (w) => {
      await v.audit.record(w, row("test.rolled-back"));
      throw new Error("boom");
    });
    const kept = v.tx.run((w) => v.audit.record(w, row("test.kept")));
    await expect(failing).rejects.toThrow("boom");
    await kept;
    await v.asMaster("GET", "/secrets/a");

    const report = verifyAuditChain(v.db, v.cipher.auditChainKeys());
    expect(report).toMatchObject({ ok: true, rows: 3 });
    expect(await actions(v)).toEqual(["secret.created", "test.kept", "secret.read"]);
    const head = JSON.parse((v.db.prepare("SELECT value FROM meta WHERE name = 'audit_head'").get() as { value: string }).value);
    const last = v.db.prepare("SELECT id, hash FROM audit ORDER BY id DESC LIMIT 1").get() as { id: number; hash: string };
    expect(head).toEqual({ id: last.id, hash: last.hash, mac: expect.stringMatching(/^[0-9a-f]{64}$/) });
  });

  itSqlite("chains a batch's rows at its commit around a rolled-back row in the middle, and the next batch after them", async () => {
    const v = buildSqliteTestVault();
    const first = v.tx.run((w) => v.audit.record(w, row("test.first")));
    const failing = v.tx.run(async (w) => {
      await v.audit.record(w, row("test.rolled-back"));
      throw new Error("boom");
    });
    const second = v.tx.run((w) => v.audit.record(w, row("test.second")));
    await expect(failing).rejects.toThrow("boom");
    await Promise.all([first, second]);
    await v.tx.run((w) => v.audit.record(w, row("test.next-batch")));
    expect(verifyAuditChain(v.db, v.cipher.auditChainKeys())).toMatchObject({ ok: true, rows: 3 });
    expect(await actions(v)).toEqual(["test.first", "test.second", "test.next-batch"]);
    const ids = (v.db.prepare("SELECT id FROM audit ORDER BY id").all() as { id: number }[]).map((r) => r.id);
    expect(ids).toEqual([1, 2, 3]);
  });

  itSqlite("writes nothing of a batch whose commit fails, and chains the next batch from the table", async () => {
    const v = buildSqliteTestVault();
    await v.asMaster("POST", "/secrets", { key: "a", value: "v" });
    v.sqlite.tx.onBeforeCommit(() => {
      if (v.db.prepare("SELECT 1 FROM audit WHERE action = 'test.doomed'").get()) throw new Error("commit refused");
    });
    await expect(v.tx.run((w) => v.audit.record(w, row("test.doomed")))).rejects.toThrow("commit refused");
    await v.asMaster("GET", "/secrets/a");
    expect(verifyAuditChain(v.db, v.cipher.auditChainKeys())).toMatchObject({ ok: true, rows: 2 });
  });
});
