import { createHash } from "node:crypto";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { need } from "../src/http/auth.js";
import type { AppEnv } from "../src/http/context.js";
import { errorResponse } from "../src/http/errors.js";
import { createLogger } from "../src/log/log.js";
import { buildSqliteTestVault, buildTestVault, createKey, itSqlite } from "./helpers.js";
import type { TestVault } from "./helpers.js";

const nowSeconds = (v: TestVault) => Math.floor(v.clock.now() / 1000);

async function json(res: Response): Promise<Record<string, unknown>> {
  return (await res.json()) as Record<string, unknown>;
}

describe("POST /keys, GET /keys, DELETE /keys/:id", () => {
  it("creates a key and shows its vsk_ token once, in the create response only", async () => {
    const v = buildTestVault();
    const res = await v.asMaster("POST", "/keys", { name: "ci reader", permissions: ["read"] });
    expect(res.status).toBe(201);
    const body = await json(res);
    expect(body).toEqual({
      id: expect.stringMatching(/^sk_[a-z2-7]{26}$/),
      name: "ci reader",
      token: expect.stringMatching(/^vsk_[A-Za-z0-9_-]{43}$/),
      permissions: ["read"],
      prefix: null,
      expires_at: null,
      created_at: nowSeconds(v),
    });

    const list = await json(await v.asMaster("GET", "/keys"));
    expect(list).toEqual({
      keys: [
        {
          id: body.id,
          name: "ci reader",
          permissions: ["read"],
          prefix: null,
          expires_at: null,
          created_at: nowSeconds(v),
          last_used_at: null,
        },
      ],
    });
    expect(JSON.stringify(list)).not.toContain(body.token as string);
  });

  it("stores only the SHA-256 of the token", async () => {
    const v = buildTestVault();
    const key = await createKey(v, { permissions: ["read"] });
    const rows = await v.query("SELECT * FROM scoped_keys");
    expect(rows).toHaveLength(1);
    expect(rows[0]?.token_hash).toBe(createHash("sha256").update(key.token).digest("hex"));
    expect(JSON.stringify(rows)).not.toContain(key.token);
  });

  it("keeps the fields it was given: prefix, expires_at, permissions in canonical order without duplicates", async () => {
    const v = buildTestVault();
    const expires = nowSeconds(v) + 3600;
    const res = await v.asMaster("POST", "/keys", {
      name: "  deploy  ",
      permissions: ["admin", "read", "read"],
      prefix: "team-a/",
      expires_at: expires,
    });
    expect(res.status).toBe(201);
    expect(await json(res)).toMatchObject({
      name: "deploy",
      permissions: ["read", "admin"],
      prefix: "team-a/",
      expires_at: expires,
    });
  });

  it.each([
    ["a missing name", { permissions: ["read"] }],
    ["a blank name", { name: "   ", permissions: ["read"] }],
    ["a name over 128 characters", { name: "n".repeat(129), permissions: ["read"] }],
    ["missing permissions", { name: "k" }],
    ["empty permissions", { name: "k", permissions: [] }],
    ["an unknown permission", { name: "k", permissions: ["read", "root"] }],
    ["permissions as a string", { name: "k", permissions: "read" }],
    ["an empty prefix", { name: "k", permissions: ["read"], prefix: "" }],
    ["a prefix starting with /", { name: "k", permissions: ["read"], prefix: "/etc" }],
    ["a prefix with a space", { name: "k", permissions: ["read"], prefix: "a b" }],
    ["a fractional expires_at", { name: "k", permissions: ["read"], expires_at: 1.5 }],
    ["a string expires_at", { name: "k", permissions: ["read"], expires_at: "tomorrow" }],
  ])("answers 400 for %s and creates nothing", async (_case, body) => {
    const v = buildTestVault();
    const res = await v.asMaster("POST", "/keys", body);
    expect(res.status).toBe(400);
    expect(await json(res)).toEqual({ error: expect.any(String) });
    expect((await json(await v.asMaster("GET", "/keys"))).keys).toEqual([]);
  });

  it("answers 400 for an expires_at that is not in the future", async () => {
    const v = buildTestVault();
    const res = await v.asMaster("POST", "/keys", { name: "k", permissions: ["read"], expires_at: nowSeconds(v) });
    expect(res.status).toBe(400);
    expect(await json(res)).toEqual({ error: "expires_at must be in the future" });
  });

  it("accepts null for the optional prefix and expires_at", async () => {
    const v = buildTestVault();
    const res = await v.asMaster("POST", "/keys", { name: "k", permissions: ["read"], prefix: null, expires_at: null });
    expect(res.status).toBe(201);
    expect(await json(res)).toMatchObject({ prefix: null, expires_at: null });
  });

  it("pages the key list with limit and cursor", async () => {
    const v = buildTestVault();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await createKey(v, { name: `k${i}`, permissions: ["read"] })).id);
    const first = await json(await v.asMaster("GET", "/keys?limit=2"));
    expect((first.keys as { id: string }[]).map((k) => k.id)).toEqual(ids.slice(0, 2));
    const second = await json(await v.asMaster("GET", `/keys?limit=2&cursor=${first.next_cursor as string}`));
    const third = await json(await v.asMaster("GET", `/keys?limit=2&cursor=${second.next_cursor as string}`));
    expect((second.keys as { id: string }[]).map((k) => k.id)).toEqual(ids.slice(2, 4));
    expect((third.keys as { id: string }[]).map((k) => k.id)).toEqual(ids.slice(4));
    expect(third.next_cursor).toBeUndefined();
    expect((await v.asMaster("GET", "/keys?limit=0")).status).toBe(400);
  });

  it("revokes a key at once: later requests with it get 401, and it leaves the list", async () => {
    const v = buildTestVault();
    await v.asMaster("POST", "/secrets", { key: "app/db", value: "pw" });
    const key = await createKey(v, { permissions: ["read"] });
    expect((await v.request("GET", "/secrets/app/db", { token: key.token })).status).toBe(200);

    const del = await v.asMaster("DELETE", `/keys/${key.id}`);
    expect(del.status).toBe(200);
    expect(await json(del)).toEqual({ deleted: true });

    const after = await v.request("GET", "/secrets/app/db", { token: key.token });
    expect(after.status).toBe(401);
    expect(await json(after)).toEqual({ error: "invalid token" });
    expect((await json(await v.asMaster("GET", "/keys"))).keys).toEqual([]);
    expect((await v.asMaster("DELETE", `/keys/${key.id}`)).status).toBe(404);
  });

  it("rejects a key from its expires_at on with 401", async () => {
    const v = buildTestVault();
    await v.asMaster("POST", "/secrets", { key: "app/db", value: "pw" });
    const key = await createKey(v, { permissions: ["read"], expires_at: nowSeconds(v) + 60 });
    v.clock.advance(59_000);
    expect((await v.request("GET", "/secrets/app/db", { token: key.token })).status).toBe(200);
    v.clock.advance(1_000);
    const res = await v.request("GET", "/secrets/app/db", { token: key.token });
    expect(res.status).toBe(401);
    expect(await json(res)).toEqual({ error: "token expired" });
  });

  it("answers 405 with Allow for other methods", async () => {
    const v = buildTestVault();
    const put = await v.asMaster("PUT", "/keys");
    expect(put.status).toBe(405);
    expect(put.headers.get("allow")).toBe("GET, HEAD, POST");
    const patch = await v.asMaster("PATCH", "/keys/sk_x");
    expect(patch.status).toBe(405);
    expect(patch.headers.get("allow")).toBe("DELETE");
  });
});

describe("permissions (docs/contract.md §8)", () => {
  async function setup() {
    const v = buildTestVault();
    for (const k of ["s1", "s2", "s3", "s4"]) await v.asMaster("POST", "/secrets", { key: k, value: `value-${k}` });
    const keys = {
      read: await createKey(v, { permissions: ["read"] }),
      write: await createKey(v, { permissions: ["write"] }),
      delete: await createKey(v, { permissions: ["delete"] }),
      admin: await createKey(v, { permissions: ["admin"], prefix: null }),
    };
    return { v, keys };
  }

  it("read reads a secret and nothing else", async () => {
    const { v, keys } = await setup();
    const t = keys.read.token;
    expect((await v.request("GET", "/secrets/s1", { token: t })).status).toBe(200);
    expect((await v.request("HEAD", "/secrets/s1", { token: t })).status).toBe(200);
    expect((await v.request("POST", "/secrets", { token: t, body: { key: "n", value: "v" } })).status).toBe(403);
    expect((await v.request("PATCH", "/secrets/s1", { token: t, body: { ttl_seconds: 5 } })).status).toBe(403);
    expect((await v.request("DELETE", "/secrets/s1", { token: t })).status).toBe(403);
    expect((await v.request("GET", "/secrets", { token: t })).status).toBe(403);
  });

  it("write creates and patches, and cannot read", async () => {
    const { v, keys } = await setup();
    const t = keys.write.token;
    expect((await v.request("POST", "/secrets", { token: t, body: { key: "n", value: "v" } })).status).toBe(201);
    expect((await v.request("PATCH", "/secrets/s1", { token: t, body: { ttl_seconds: 5 } })).status).toBe(200);
    const read = await v.request("GET", "/secrets/s1", { token: t });
    expect(read.status).toBe(403);
    expect(await json(read)).toEqual({ error: "this key lacks the read permission" });
  });

  it("delete deletes, and cannot read", async () => {
    const { v, keys } = await setup();
    const t = keys.delete.token;
    expect((await v.request("DELETE", "/secrets/s1", { token: t })).status).toBe(200);
    expect((await v.request("GET", "/secrets/s2", { token: t })).status).toBe(403);
  });

  it("admin does everything: read, write, delete, list, prune, audit and keys", async () => {
    const { v, keys } = await setup();
    const t = keys.admin.token;
    expect((await v.request("GET", "/secrets/s1", { token: t })).status).toBe(200);
    expect((await v.request("POST", "/secrets", { token: t, body: { key: "n", value: "v" } })).status).toBe(201);
    expect((await v.request("PATCH", "/secrets/s2", { token: t, body: { max_reads: 2 } })).status).toBe(200);
    expect((await v.request("DELETE", "/secrets/s3", { token: t })).status).toBe(200);
    expect((await v.request("GET", "/secrets", { token: t })).status).toBe(200);
    expect((await v.request("POST", "/prune", { token: t })).status).toBe(200);
    expect((await v.request("GET", "/audit", { token: t })).status).toBe(200);
    expect((await v.request("GET", "/keys", { token: t })).status).toBe(200);
  });

  it("a 403 for a missing permission does not reveal whether the secret exists", async () => {
    const { v, keys } = await setup();
    const existing = await v.request("DELETE", "/secrets/s1", { token: keys.read.token });
    const missing = await v.request("DELETE", "/secrets/nope", { token: keys.read.token });
    expect([existing.status, missing.status]).toEqual([403, 403]);
    expect(await existing.text()).toBe(await missing.text());
    expect((await v.asMaster("GET", "/secrets/s1")).status).toBe(200);
  });

  it("answers 403 to a principal actor on a global route (need())", async () => {
    const app = new Hono<AppEnv>();
    app.use(async (c, next) => {
      c.set("actor", { kind: "principal", keyId: "pk_x", principalId: "prn_x", orgId: "org_x", role: "owner", letters: "rRlLcCpPaAmMdD" });
      return next();
    });
    app.get("/secrets", need("read"), (c) => c.json({ ok: true }));
    app.onError((err, c) => errorResponse(err, c, createLogger("silent")));
    const res = await app.request("/secrets");
    expect(res.status).toBe(403);
  });
});

describe("prefix scoping (docs/contract.md §8)", () => {
  async function setup() {
    const v = buildTestVault();
    await v.asMaster("POST", "/secrets", { key: "team-a/db", value: "a-secret" });
    await v.asMaster("POST", "/secrets", { key: "team-b/db", value: "b-secret" });
    const pub = (await json(await v.asMaster("POST", "/secrets", { value: "public-secret" }))).id as string;
    const key = await createKey(v, { permissions: ["read", "write", "delete"], prefix: "team-a/" });
    return { v, pub, token: key.token };
  }

  it("acts on secrets inside the prefix", async () => {
    const { v, token } = await setup();
    const read = await v.request("GET", "/secrets/team-a/db", { token });
    expect(read.status).toBe(200);
    expect(await json(read)).toMatchObject({ key: "team-a/db", value: "a-secret" });
    expect((await v.request("POST", "/secrets", { token, body: { key: "team-a/new", value: "v" } })).status).toBe(201);
    expect((await v.request("PATCH", "/secrets/team-a/new", { token, body: { ttl_seconds: 60 } })).status).toBe(200);
    expect((await v.request("DELETE", "/secrets/team-a/new", { token })).status).toBe(200);
  });

  it("answers 403 outside the prefix whether or not the secret exists, and changes nothing", async () => {
    const { v, token } = await setup();
    const existing = await v.request("GET", "/secrets/team-b/db", { token });
    const missing = await v.request("GET", "/secrets/team-b/nothing-here", { token });
    expect(existing.status).toBe(403);
    expect(missing.status).toBe(403);
    expect(await existing.text()).toBe(await missing.text());
    expect((await v.request("HEAD", "/secrets/team-b/db", { token })).status).toBe(403);
    expect((await v.request("PATCH", "/secrets/team-b/db", { token, body: { max_reads: 1 } })).status).toBe(403);
    expect((await v.request("DELETE", "/secrets/team-b/db", { token })).status).toBe(403);
    expect((await v.request("POST", "/secrets", { token, body: { key: "team-b/x", value: "v" } })).status).toBe(403);
    const untouched = await json(await v.asMaster("GET", "/secrets/team-b/db"));
    expect(untouched).toMatchObject({ value: "b-secret", read_count: 1, max_reads: null });
    expect((await v.asMaster("GET", "/secrets/team-b/x")).status).toBe(404);
  });

  it("keeps public secrets out of reach of a prefixed key", async () => {
    const { v, pub, token } = await setup();
    expect((await v.request("GET", `/secrets/${pub}`, { token })).status).toBe(403);
    expect((await v.request("DELETE", `/secrets/${pub}`, { token })).status).toBe(403);
    expect((await v.request("POST", "/secrets", { token, body: { value: "anonymous" } })).status).toBe(403);
    expect((await v.asMaster("GET", `/secrets/${pub}`)).status).toBe(200);
  });

  it("checks the prefix before validating input (403 before 400)", async () => {
    const { v, token } = await setup();
    expect((await v.request("GET", "/secrets/bad%20key", { token })).status).toBe(403);
    expect((await v.request("GET", "/secrets/team-a%2F%20bad", { token })).status).toBe(400);
  });

  it("lists and prunes only its prefix when the key is an admin key", async () => {
    const v = buildTestVault();
    for (const k of ["a/live", "b/live"]) await v.asMaster("POST", "/secrets", { key: k, value: "v" });
    for (const k of ["a/old", "b/old"]) await v.asMaster("POST", "/secrets", { key: k, value: "v", ttl_seconds: 10 });
    await v.asMaster("POST", "/secrets", { value: "public", ttl_seconds: 10 });
    const admin = await createKey(v, { permissions: ["admin"], prefix: "a/" });

    const listed = await json(await v.request("GET", "/secrets", { token: admin.token }));
    expect((listed.secrets as { key: string }[]).map((s) => s.key)).toEqual(["a/live", "a/old"]);

    v.clock.advance(11_000);
    expect(await json(await v.request("POST", "/prune", { token: admin.token }))).toEqual({ pruned: 1 });
    expect(await json(await v.asMaster("POST", "/prune"))).toEqual({ pruned: 2 });
  });
});

describe("creating keys from keys (docs/contract.md §8)", () => {
  it("lets an admin key grant only what it holds, within its prefix", async () => {
    const v = buildTestVault();
    const admin = await createKey(v, { permissions: ["admin"], prefix: "a/" });
    const ok = await v.request("POST", "/keys", { token: admin.token, body: { name: "r", permissions: ["read"], prefix: "a/b/" } });
    expect(ok.status).toBe(201);
    const sameScope = await v.request("POST", "/keys", { token: admin.token, body: { name: "a2", permissions: ["admin"], prefix: "a/" } });
    expect(sameScope.status).toBe(201);

    for (const body of [
      { name: "x", permissions: ["read"], prefix: "b/" },
      { name: "x", permissions: ["read"] },
      { name: "x", permissions: ["admin"] },
      { name: "x", permissions: ["read"], prefix: "" + "a" },
    ]) {
      const res = await v.request("POST", "/keys", { token: admin.token, body });
      expect(res.status, JSON.stringify(body)).toBe(403);
    }
    expect((await json(await v.asMaster("GET", "/keys"))).keys).toHaveLength(3);
  });

  it("lets only the master key create an unrestricted admin key", async () => {
    const v = buildTestVault();
    const admin = await createKey(v, { permissions: ["admin"] });
    const res = await v.request("POST", "/keys", { token: admin.token, body: { name: "root2", permissions: ["admin"] } });
    expect(res.status).toBe(403);
    expect(await json(res)).toEqual({ error: "only the master key may create an admin key without a prefix" });
    const narrower = await v.request("POST", "/keys", { token: admin.token, body: { name: "r", permissions: ["read", "write"] } });
    expect(narrower.status).toBe(201);
    const prefixedAdmin = await v.request("POST", "/keys", { token: admin.token, body: { name: "a", permissions: ["admin"], prefix: "x/" } });
    expect(prefixedAdmin.status).toBe(201);
  });

  it("does not let a key outlive the key that creates it", async () => {
    const v = buildTestVault();
    const until = nowSeconds(v) + 3600;
    const admin = await createKey(v, { permissions: ["admin"], prefix: "a/", expires_at: until });
    const forever = await v.request("POST", "/keys", { token: admin.token, body: { name: "x", permissions: ["read"], prefix: "a/" } });
    expect(forever.status).toBe(403);
    const later = await v.request("POST", "/keys", {
      token: admin.token,
      body: { name: "x", permissions: ["read"], prefix: "a/", expires_at: until + 1 },
    });
    expect(later.status).toBe(403);
    const within = await v.request("POST", "/keys", {
      token: admin.token,
      body: { name: "x", permissions: ["read"], prefix: "a/", expires_at: until },
    });
    expect(within.status).toBe(201);
  });

  it("refuses key management to keys without admin", async () => {
    const v = buildTestVault();
    const writer = await createKey(v, { permissions: ["read", "write", "delete"] });
    expect((await v.request("POST", "/keys", { token: writer.token, body: { name: "x", permissions: ["read"] } })).status).toBe(403);
    expect((await v.request("GET", "/keys", { token: writer.token })).status).toBe(403);
    expect((await v.request("DELETE", `/keys/${writer.id}`, { token: writer.token })).status).toBe(403);
  });

  it("shows and deletes, for a prefixed admin key, only keys within its prefix", async () => {
    const v = buildTestVault();
    const outside = await createKey(v, { name: "outside", permissions: ["read"], prefix: "b/" });
    const unrestricted = await createKey(v, { name: "all", permissions: ["read"] });
    const inside = await createKey(v, { name: "inside", permissions: ["read"], prefix: "a/x/" });
    const admin = await createKey(v, { name: "admin-a", permissions: ["admin"], prefix: "a/" });

    const listed = await json(await v.request("GET", "/keys", { token: admin.token }));
    expect((listed.keys as { name: string }[]).map((k) => k.name)).toEqual(["inside", "admin-a"]);

    expect((await v.request("DELETE", `/keys/${outside.id}`, { token: admin.token })).status).toBe(403);
    expect((await v.request("DELETE", `/keys/${unrestricted.id}`, { token: admin.token })).status).toBe(403);
    expect((await v.request("DELETE", `/keys/${inside.id}`, { token: admin.token })).status).toBe(200);
    expect((await json(await v.asMaster("GET", "/keys"))).keys).toHaveLength(3);
  });
});

describe("last_used_at", () => {
  it("is written on use, at most once a minute per key", async () => {
    const v = buildTestVault();
    await v.asMaster("POST", "/secrets", { key: "k", value: "v" });
    const key = await createKey(v, { permissions: ["read"] });
    const lastUsed = async () =>
      ((await json(await v.asMaster("GET", "/keys"))).keys as { last_used_at: number | null }[])[0]?.last_used_at;
    expect(await lastUsed()).toBeNull();

    const start = nowSeconds(v);
    await v.request("GET", "/secrets/k", { token: key.token });
    expect(await lastUsed()).toBe(start);

    v.clock.advance(30_000);
    await v.request("GET", "/secrets/k", { token: key.token });
    expect(await lastUsed()).toBe(start);

    v.clock.advance(30_000);
    await v.request("GET", "/secrets/k", { token: key.token });
    expect(await lastUsed()).toBe(start + 60);
  });

  itSqlite("does not write the keys table on every request", async () => {
    const v = buildSqliteTestVault();
    await v.asMaster("POST", "/secrets", { key: "k", value: "v" });
    const key = await createKey(v, { permissions: ["read"] });
    await v.request("GET", "/secrets/k", { token: key.token });
    let writes = 0;
    v.db.function("note_key_write", () => {
      writes += 1;
      return null;
    });
    v.db.exec("CREATE TEMP TRIGGER note_key_write AFTER UPDATE ON scoped_keys BEGIN SELECT note_key_write(); END");
    for (let i = 0; i < 5; i++) {
      v.clock.advance(1_000);
      expect((await v.request("GET", "/secrets/k", { token: key.token })).status).toBe(200);
    }
    expect(writes).toBe(0);
    v.clock.advance(60_000);
    await v.request("GET", "/secrets/k", { token: key.token });
    expect(writes).toBe(1);
  });
});
