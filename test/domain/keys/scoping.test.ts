import { describe, expect, it } from "vitest";
import { buildSqliteTestVault, buildTestVault, createKey, itSqlite } from "../../support/helpers.js";
import { nowSeconds } from "../../support/org-helpers.js";

async function json(res: Response): Promise<Record<string, unknown>> {
  return (await res.json()) as Record<string, unknown>;
}

// Scoped keys' prefixes, keys made from keys, and last_used_at (docs/contract.md §8); both engines.

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
