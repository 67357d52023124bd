import { describe, expect, it } from "vitest";
import { buildTestVault } from "../../../support/helpers.js";
import { create, json, T0 } from "../../../support/secret-route-helpers.js";

// PATCH and DELETE /secrets/:key and POST /prune (docs/contract.md); both engines.

describe("PATCH /secrets/:key", () => {
  it("answers {key, updated: true} and sets the TTL from now", async () => {
    const v = buildTestVault();
    await create(v, { key: "k", value: "v", ttl_seconds: 10 });
    v.clock.advance(5_000);
    const res = await v.asMaster("PATCH", "/secrets/k", { ttl_seconds: 100 });
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ key: "k", updated: true });
    expect(await json(await v.asMaster("GET", "/secrets/k"))).toMatchObject({ expires_at: T0 + 105 });
  });

  it("resets read_count to 0 with a new max_reads", async () => {
    const v = buildTestVault();
    await create(v, { key: "k", value: "v", max_reads: 3 });
    await v.asMaster("GET", "/secrets/k");
    await v.asMaster("GET", "/secrets/k");
    expect((await v.asMaster("PATCH", "/secrets/k", { max_reads: 1 })).status).toBe(200);
    expect((await json(await v.asMaster("GET", "/secrets"))).secrets).toEqual([
      { key: "k", created_at: T0, expires_at: null, max_reads: 1, read_count: 0 },
    ]);
    expect(await json(await v.asMaster("GET", "/secrets/k"))).toMatchObject({ read_count: 1, max_reads: 1 });
    expect((await v.asMaster("GET", "/secrets/k")).status).toBe(404);
  });

  it("answers {id, updated: true} for a public secret", async () => {
    const v = buildTestVault();
    const { id } = (await json(await create(v, { value: "v" }))) as { id: string };
    expect(await json(await v.asMaster("PATCH", `/secrets/${id}`, { ttl_seconds: 5, max_reads: 2 }))).toEqual({ id, updated: true });
  });

  it("answers 404 for a missing or expired secret", async () => {
    const v = buildTestVault();
    expect((await v.asMaster("PATCH", "/secrets/missing", { ttl_seconds: 5 })).status).toBe(404);
    await create(v, { key: "k", value: "v", ttl_seconds: 1 });
    v.clock.advance(1_000);
    expect((await v.asMaster("PATCH", "/secrets/k", { ttl_seconds: 500 })).status).toBe(404);
  });
});

describe("DELETE /secrets/:key", () => {
  it("answers {deleted: true}, after which reads 404 and the key is free", async () => {
    const v = buildTestVault();
    await create(v, { key: "k", value: "v", ttl_seconds: 100, max_reads: 5 });
    const res = await v.asMaster("DELETE", "/secrets/k");
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ deleted: true });
    expect((await v.asMaster("GET", "/secrets/k")).status).toBe(404);
    expect((await v.asMaster("DELETE", "/secrets/k")).status).toBe(404);
    expect((await create(v, { key: "k", value: "again" })).status).toBe(201);
  });

  it("deletes a public secret by id", async () => {
    const v = buildTestVault();
    const { id } = (await json(await create(v, { value: "v" }))) as { id: string };
    expect(await json(await v.asMaster("DELETE", `/secrets/${id}`))).toEqual({ deleted: true });
    expect((await v.asMaster("GET", `/secrets/${id}`)).status).toBe(404);
  });
});

describe("POST /prune", () => {
  it("removes expired tombstones and counts them: {pruned}", async () => {
    const v = buildTestVault();
    await create(v, { key: "a", value: "v", ttl_seconds: 1 });
    await create(v, { key: "b", value: "v", ttl_seconds: 2 });
    await create(v, { key: "c", value: "v" });
    v.clock.advance(1_000);
    await v.asMaster("GET", "/secrets/a"); // expires it by reading
    v.clock.advance(1_000); // b is due, unswept
    const res = await v.asMaster("POST", "/prune");
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ pruned: 2 });
    expect(await json(await v.asMaster("POST", "/prune"))).toEqual({ pruned: 0 });
    expect(await v.query("SELECT key FROM secrets")).toEqual([{ key: "c" }]);
  });

  it("ignores a body", async () => {
    const v = buildTestVault();
    expect((await v.asMaster("POST", "/prune", { anything: true })).status).toBe(200);
  });
});
