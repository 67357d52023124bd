import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { serve } from "@hono/node-server";
import { afterEach, describe, expect, it } from "vitest";
import { buildTestVault, createKey } from "../../support/helpers.js";
import { actions, entries } from "../../support/audit-helpers.js";
import type { Entry } from "../../support/audit-helpers.js";

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
});
