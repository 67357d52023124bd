import { describe, expect, it } from "vitest";
import { buildTestVault } from "../../../support/helpers.js";
import { create, json, T0 } from "../../../support/secret-route-helpers.js";

describe("POST /secrets", () => {
  it("creates a keyed secret: 201 {key}", async () => {
    const v = buildTestVault();
    const res = await create(v, { key: "db/password", value: "hunter2", ttl_seconds: 60, max_reads: 3 });
    expect(res.status).toBe(201);
    expect(await json(res)).toEqual({ key: "db/password" });
  });

  it("creates a public secret: 201 {id (64 lowercase hex), url = public url + /s/<id> (the recipient page), receipt}", async () => {
    const v = buildTestVault();
    const res = await create(v, { value: "dead drop" });
    expect(res.status).toBe(201);
    const body = await json(res);
    expect(Object.keys(body).sort()).toEqual(["id", "receipt", "url"]);
    expect(body.id).toMatch(/^[0-9a-f]{64}$/);
    expect(body.receipt).toMatch(/^vrc_[A-Za-z0-9_-]{54}$/);
    expect(body.url).toBe(`http://vault.test/s/${body.id as string}`);
    const read = await v.asMaster("GET", `/secrets/${body.id as string}`);
    expect(await json(read)).toEqual({
      id: body.id,
      value: "dead drop",
      created_at: T0,
      expires_at: null,
      max_reads: null,
      read_count: 1,
    });
  });

  it("gives every public secret its own id", async () => {
    const v = buildTestVault();
    const ids = new Set<string>();
    for (let i = 0; i < 20; i++) ids.add(((await json(await create(v, { value: "x" }))) as { id: string }).id);
    expect(ids.size).toBe(20);
  });

  it("answers 409 for the key of an active secret", async () => {
    const v = buildTestVault();
    await create(v, { key: "k", value: "one" });
    const res = await create(v, { key: "k", value: "two" });
    expect(res.status).toBe(409);
    expect(Object.keys(await json(res))).toContain("error");
    expect(await json(await v.asMaster("GET", "/secrets/k"))).toMatchObject({ value: "one" });
  });

  it("ignores unknown fields", async () => {
    const v = buildTestVault();
    const res = await create(v, { key: "k", value: "v", colour: "blue", state: "sealed" });
    expect(res.status).toBe(201);
    expect(await json(await v.asMaster("GET", "/secrets/k"))).toMatchObject({ value: "v", read_count: 1 });
  });

  it("accepts a charset parameter on the content type", async () => {
    const v = buildTestVault();
    const res = await v.request("POST", "/secrets", {
      raw: JSON.stringify({ key: "k", value: "v" }),
      contentType: "application/json; charset=utf-8",
    });
    expect(res.status).toBe(201);
  });

  it("answers 402 {error, message} at the active-secret limit", async () => {
    const v = buildTestVault({ activeLimit: () => 2 });
    expect((await create(v, { key: "a", value: "v" })).status).toBe(201);
    expect((await create(v, { value: "v" })).status).toBe(201);
    const res = await create(v, { key: "c", value: "v" });
    expect(res.status).toBe(402);
    const body = await json(res);
    expect(body.error).toBe("free tier limit reached");
    expect(typeof body.message).toBe("string");
    expect(Object.keys(body).sort()).toEqual(["error", "message"]);
    expect((await create(v, { value: "v" })).status).toBe(402);
  });
});

describe("GET /secrets/:key", () => {
  it("returns {key, value, created_at, expires_at, max_reads, read_count} in seconds, read_count after this read", async () => {
    const v = buildTestVault();
    await create(v, { key: "k", value: "v", ttl_seconds: 90, max_reads: 5 });
    v.clock.advance(1_500);
    const res = await v.asMaster("GET", "/secrets/k");
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({
      key: "k",
      value: "v",
      created_at: T0,
      expires_at: T0 + 90,
      max_reads: 5,
      read_count: 1,
    });
    expect(await json(await v.asMaster("GET", "/secrets/k"))).toMatchObject({ read_count: 2 });
  });

  it("shows expires_at null and max_reads null without TTL or limit", async () => {
    const v = buildTestVault();
    await create(v, { key: "k", value: "v" });
    expect(await json(await v.asMaster("GET", "/secrets/k"))).toEqual({
      key: "k",
      value: "v",
      created_at: T0,
      expires_at: null,
      max_reads: null,
      read_count: 1,
    });
  });

  it("round-trips unicode and JSON-ish values exactly", async () => {
    const v = buildTestVault();
    const value = 'päss wörd 🔑 "quoted" \\ back\nslash\u0000nul';
    await create(v, { key: "u", value });
    expect(await json(await v.asMaster("GET", "/secrets/u"))).toMatchObject({ value });
  });

  it("burns on the read that reaches max_reads: that read gets the value, later reads 404", async () => {
    const v = buildTestVault();
    await create(v, { key: "k", value: "v", max_reads: 2 });
    expect((await v.asMaster("GET", "/secrets/k")).status).toBe(200);
    const last = await v.asMaster("GET", "/secrets/k");
    expect(await json(last)).toMatchObject({ value: "v", read_count: 2, max_reads: 2 });
    const after = await v.asMaster("GET", "/secrets/k");
    expect(after.status).toBe(404);
    expect(Object.keys(await json(after))).toEqual(["error"]);
    expect((await json(await v.asMaster("GET", "/secrets"))).secrets).toEqual([]);
  });

  it("answers 404 for a secret past its TTL, before any sweep", async () => {
    const v = buildTestVault();
    await create(v, { key: "k", value: "v", ttl_seconds: 5 });
    v.clock.advance(5_000);
    const res = await v.asMaster("GET", "/secrets/k");
    expect(res.status).toBe(404);
    expect(await json(res)).toHaveProperty("error");
  });

  it("answers 404 for a missing key and for a missing public id", async () => {
    const v = buildTestVault();
    expect((await v.asMaster("GET", "/secrets/nothing")).status).toBe(404);
    expect((await v.asMaster("GET", `/secrets/${"a".repeat(64)}`)).status).toBe(404);
  });

  it("serves keys with / in them, and %2F decodes to /", async () => {
    const v = buildTestVault();
    expect((await create(v, { key: "team/app/db", value: "nested" })).status).toBe(201);
    expect(await json(await v.asMaster("GET", "/secrets/team/app/db"))).toMatchObject({ key: "team/app/db", value: "nested" });
    expect(await json(await v.asMaster("GET", "/secrets/team%2Fapp%2Fdb"))).toMatchObject({ key: "team/app/db", read_count: 2 });
    expect(await json(await v.asMaster("PATCH", "/secrets/team%2Fapp/db", { max_reads: 1 }))).toEqual({
      key: "team/app/db",
      updated: true,
    });
    expect(await json(await v.asMaster("DELETE", "/secrets/team%2fapp%2fdb"))).toEqual({ deleted: true });
  });

  it("serves keys with every allowed punctuation character", async () => {
    const v = buildTestVault();
    const key = "a.b_c-d~e@f:g+h=i/j";
    expect((await create(v, { key, value: "v" })).status).toBe(201);
    const res = await v.asMaster("GET", `/secrets/${encodeURIComponent(key)}`);
    expect(await json(res)).toMatchObject({ key, value: "v" });
  });

  it("HEAD answers 200 without a body and without counting a read; 404 when missing", async () => {
    const v = buildTestVault();
    await create(v, { key: "k", value: "v", max_reads: 1 });
    const head = await v.asMaster("HEAD", "/secrets/k");
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
    expect(head.headers.get("cache-control")).toBe("no-store");
    expect((await v.asMaster("HEAD", "/secrets/k")).status).toBe(200);
    expect(await json(await v.asMaster("GET", "/secrets/k"))).toMatchObject({ read_count: 1 });
    expect((await v.asMaster("HEAD", "/secrets/k")).status).toBe(404);
    expect((await v.asMaster("HEAD", "/secrets/missing")).status).toBe(404);
  });
});

describe("GET /secrets (list)", () => {
  it("lists metadata of keyed and public secrets, never values", async () => {
    const v = buildTestVault();
    await create(v, { key: "k", value: "secret-value-1", ttl_seconds: 30, max_reads: 2 });
    const pub = (await json(await create(v, { value: "secret-value-2" }))) as { id: string };
    const res = await v.asMaster("GET", "/secrets");
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body).toEqual({
      secrets: [
        { key: "k", created_at: T0, expires_at: T0 + 30, max_reads: 2, read_count: 0 },
        { id: pub.id, created_at: T0, expires_at: null, max_reads: null, read_count: 0 },
      ],
    });
    expect(JSON.stringify(body)).not.toContain("secret-value");
  });

  it("leaves out expired (swept or not), burned and deleted secrets", async () => {
    const v = buildTestVault();
    await create(v, { key: "expires", value: "v", ttl_seconds: 1 });
    await create(v, { key: "burns", value: "v", max_reads: 1 });
    await create(v, { key: "deleted", value: "v" });
    await create(v, { key: "live", value: "v" });
    await v.asMaster("GET", "/secrets/burns");
    await v.asMaster("DELETE", "/secrets/deleted");
    v.clock.advance(1_000);
    expect((await json(await v.asMaster("GET", "/secrets"))).secrets).toEqual([
      { key: "live", created_at: T0, expires_at: null, max_reads: null, read_count: 0 },
    ]);
  });

  it("pages with limit and cursor; next_cursor only while more remain", async () => {
    const v = buildTestVault();
    const keys = Array.from({ length: 7 }, (_, i) => `key-${i}`);
    for (const key of keys) await create(v, { key, value: "v" });
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const res = await v.asMaster("GET", `/secrets?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      expect(res.status).toBe(200);
      const body = (await json(res)) as { secrets: { key: string }[]; next_cursor?: string };
      expect(body.secrets.length).toBeLessThanOrEqual(3);
      seen.push(...body.secrets.map((s) => s.key));
      cursor = body.next_cursor;
      if (cursor !== undefined) expect(typeof cursor).toBe("string");
      pages++;
    } while (cursor !== undefined);
    expect(pages).toBe(3);
    expect(seen).toEqual(keys);
    const all = await json(await v.asMaster("GET", "/secrets?limit=7"));
    expect(all).not.toHaveProperty("next_cursor");
    expect((all.secrets as unknown[]).length).toBe(7);
    const whole = await json(await v.asMaster("GET", "/secrets"));
    expect(Object.keys(whole)).toEqual(["secrets"]);
  });

  it("answers an empty list when nothing is stored", async () => {
    const v = buildTestVault();
    expect(await json(await v.asMaster("GET", "/secrets"))).toEqual({ secrets: [] });
  });
});
