import { createHash } from "node:crypto";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { need } from "../../../src/http/auth.js";
import type { AppEnv } from "../../../src/http/context.js";
import { errorResponse } from "../../../src/http/errors.js";
import { createLogger } from "../../../src/log/log.js";
import { buildTestVault, createKey } from "../../support/helpers.js";
import { nowSeconds } from "../../support/org-helpers.js";

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
