import { describe, expect, it } from "vitest";
import { buildTestVault } from "../../../support/helpers.js";
import { createPrincipalKey, createOrg, createPrincipal, createRole, expectStatus, nowSeconds } from "../../../support/org-helpers.js";

describe("organizations", () => {
  it("creates, lists and gets an org; the name is trimmed and metadata kept", async () => {
    const v = buildTestVault();
    const created = await expectStatus(v.asMaster("POST", "/orgs", { name: "  acme  ", metadata: { tier: "gold" } }), 201);
    expect(created).toEqual({ id: expect.stringMatching(/^org_[a-z2-7]{26}$/), name: "acme", created_at: nowSeconds(v) });
    expect(await expectStatus(v.asMaster("GET", "/orgs"), 200)).toEqual({ orgs: [created] });
    expect(await expectStatus(v.asMaster("GET", `/orgs/${created.id}`), 200)).toEqual({ ...created, metadata: { tier: "gold" } });
  });

  it("gives an org without metadata an empty metadata object", async () => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    expect((await expectStatus(v.asMaster("GET", `/orgs/${orgId}`), 200)).metadata).toEqual({});
  });

  it("refuses a second org with the same name (409)", async () => {
    const v = buildTestVault();
    await createOrg(v, "acme");
    await expectStatus(v.asMaster("POST", "/orgs", { name: "acme" }), 409);
    await expectStatus(v.asMaster("POST", "/orgs", { name: " acme " }), 409);
  });

  it.each([
    ["no name", {}],
    ["an empty name", { name: "" }],
    ["a blank name", { name: "   " }],
    ["a name over 128 characters", { name: "x".repeat(129) }],
    ["a name that is not a string", { name: 42 }],
    ["metadata that is an array", { name: "a", metadata: [1] }],
    ["metadata that is a string", { name: "a", metadata: "x" }],
    ["metadata over 16 KiB", { name: "a", metadata: { blob: "x".repeat(16 * 1024) } }],
  ])("answers 400 to %s and creates nothing", async (_label, body) => {
    const v = buildTestVault();
    const res = await expectStatus(v.asMaster("POST", "/orgs", body), 400);
    expect(res.error).toEqual(expect.any(String));
    expect(await expectStatus(v.asMaster("GET", "/orgs"), 200)).toEqual({ orgs: [] });
  });

  it("takes metadata: null as metadata left out (docs/contract.md §14)", async () => {
    const v = buildTestVault();
    await expectStatus(v.asMaster("POST", "/orgs", { name: "a", metadata: null }), 201);
  });

  it("accepts a name of exactly 128 characters", async () => {
    const v = buildTestVault();
    await expectStatus(v.asMaster("POST", "/orgs", { name: "x".repeat(128) }), 201);
  });

  it("counts name characters as code points, not UTF-16 units", async () => {
    const v = buildTestVault();
    const emoji = "\u{1F510}".repeat(128); // 128 characters, 256 UTF-16 units
    expect((await expectStatus(v.asMaster("POST", "/orgs", { name: emoji }), 201)).name).toBe(emoji);
    await expectStatus(v.asMaster("POST", "/orgs", { name: "\u{1F510}".repeat(129) }), 400);
    const orgId = await createOrg(v);
    await expectStatus(v.asMaster("POST", `/orgs/${orgId}/principals`, { name: emoji, role: "reader" }), 201);
  });

  it("pages the org list with limit and cursor", async () => {
    const v = buildTestVault();
    for (const name of ["a", "b", "c"]) await createOrg(v, name);
    const first = await expectStatus(v.asMaster("GET", "/orgs?limit=2"), 200);
    expect((first.orgs as { name: string }[]).map((o) => o.name)).toEqual(["a", "b"]);
    const second = await expectStatus(v.asMaster("GET", `/orgs?limit=2&cursor=${first.next_cursor as string}`), 200);
    expect((second.orgs as { name: string }[]).map((o) => o.name)).toEqual(["c"]);
    expect(second.next_cursor).toBeUndefined();
    await expectStatus(v.asMaster("GET", "/orgs?limit=0"), 400);
    await expectStatus(v.asMaster("GET", "/orgs?limit=1001"), 400);
    await expectStatus(v.asMaster("GET", "/orgs?cursor=bogus"), 400);
  });

  it("answers 404 for an unknown org on every org path the master key uses", async () => {
    const v = buildTestVault();
    const unknown = "org_aaaaaaaaaaaaaaaaaaaaaaaaaa";
    await expectStatus(v.asMaster("GET", `/orgs/${unknown}`), 404);
    await expectStatus(v.asMaster("DELETE", `/orgs/${unknown}`), 404);
    await expectStatus(v.asMaster("GET", `/orgs/${unknown}/principals`), 404);
    await expectStatus(v.asMaster("POST", `/orgs/${unknown}/principals`, { name: "x", role: "reader" }), 404);
    await expectStatus(v.asMaster("GET", `/orgs/${unknown}/roles`), 404);
    await expectStatus(v.asMaster("GET", `/orgs/${unknown}/secrets`), 404);
    await expectStatus(v.asMaster("POST", `/orgs/${unknown}/secrets`, { key: "k", value: "v" }), 404);
  });

  it("checks the input (400) before the org's existence (404)", async () => {
    const v = buildTestVault();
    const unknown = "org_aaaaaaaaaaaaaaaaaaaaaaaaaa";
    await expectStatus(v.asMaster("POST", `/orgs/${unknown}/principals`, { name: "" }), 400);
    await expectStatus(v.asMaster("POST", `/orgs/${unknown}/secrets`, { key: "k" }), 400);
    await expectStatus(v.asMaster("GET", `/orgs/${unknown}/secrets?limit=0`), 400);
  });

  it("answers 405 with Allow for a wrong method", async () => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    const res = await v.asMaster("PUT", `/orgs/${orgId}`);
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, HEAD, DELETE");
    expect((await v.asMaster("DELETE", "/orgs")).headers.get("allow")).toBe("GET, HEAD, POST");
  });
});

describe("deleting an org: no cascading deletes (docs/contract.md §9)", () => {
  it("deletes an empty org, after which it is gone", async () => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    expect(await expectStatus(v.asMaster("DELETE", `/orgs/${orgId}`), 200)).toEqual({ deleted: true });
    await expectStatus(v.asMaster("GET", `/orgs/${orgId}`), 404);
    expect(await expectStatus(v.asMaster("GET", "/orgs"), 200)).toEqual({ orgs: [] });
  });

  it("refuses while principals remain, naming them", async () => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    await expectStatus(v.asMaster("POST", `/orgs/${orgId}/principals`, { name: "ann", role: "reader" }), 201);
    const res = await expectStatus(v.asMaster("DELETE", `/orgs/${orgId}`), 409);
    expect(res.message).toContain("principals");
    await expectStatus(v.asMaster("GET", `/orgs/${orgId}`), 200);
  });

  it("refuses while live secrets remain, sealed ones included", async () => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    await expectStatus(v.asMaster("POST", `/orgs/${orgId}/secrets`, { key: "k", value: "v", max_reads: 1, delete: false }), 201);
    await expectStatus(v.asMaster("GET", `/orgs/${orgId}/secrets/k`), 200);
    const res = await expectStatus(v.asMaster("DELETE", `/orgs/${orgId}`), 409);
    expect(res.message).toContain("secrets");
    expect(res.message).not.toContain("principals");
  });

  it("refuses while custom roles remain", async () => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    await createRole(v, orgId, "auditor", "la");
    const res = await expectStatus(v.asMaster("DELETE", `/orgs/${orgId}`), 409);
    expect(res.message).toContain("custom roles");
  });

  it("refuses while webhooks remain, and deletes once they are gone", async () => {
    const v = buildTestVault({ webhooks: { allowPrivate: true } });
    const orgId = await createOrg(v);
    const hook = await expectStatus(v.asMaster("POST", `/orgs/${orgId}/webhooks`, { url: "https://127.0.0.1/hook", events: ["*"] }), 201);
    const res = await expectStatus(v.asMaster("DELETE", `/orgs/${orgId}`), 409);
    expect(res.message).toContain("webhooks");
    await expectStatus(v.asMaster("DELETE", `/orgs/${orgId}/webhooks/${hook.id as string}`), 200);
    await expectStatus(v.asMaster("DELETE", `/orgs/${orgId}`), 200);
  });

  it("names everything that remains at once", async () => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    await createRole(v, orgId, "auditor", "la");
    await createPrincipal(v, orgId, "auditor");
    await expectStatus(v.asMaster("POST", `/orgs/${orgId}/secrets`, { key: "k", value: "v" }), 201);
    const res = await expectStatus(v.asMaster("DELETE", `/orgs/${orgId}`), 409);
    expect(res.message).toMatch(/principals.*secrets.*custom roles/);
  });

  it("deletes an org whose secrets have all expired, pruning their tombstones", async () => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    await expectStatus(v.asMaster("POST", `/orgs/${orgId}/secrets`, { key: "k", value: "v", ttl_seconds: 60 }), 201);
    v.clock.advance(61_000);
    await expectStatus(v.asMaster("DELETE", `/orgs/${orgId}`), 200);
    const rows = (await v.query("SELECT count(*) AS n FROM secrets WHERE scope = ?", orgId))[0] as { n: number };
    expect(rows.n).toBe(0);
  });
});

describe("principals", () => {
  it("creates a principal with a built-in role and lists it", async () => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    const created = await expectStatus(v.asMaster("POST", `/orgs/${orgId}/principals`, { name: "ann", role: "writer" }), 201);
    expect(created).toEqual({
      id: expect.stringMatching(/^prn_[a-z2-7]{26}$/),
      name: "ann",
      org_id: orgId,
      role: "writer",
      metadata: {},
      created_at: nowSeconds(v),
    });
    expect(await expectStatus(v.asMaster("GET", `/orgs/${orgId}/principals`), 200)).toEqual({ principals: [created] });
    expect(await expectStatus(v.asMaster("GET", `/orgs/${orgId}/principals/${created.id as string}`), 200)).toEqual(created);
  });

  it("accepts a custom role of the org and refuses an unknown role (400)", async () => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    const other = await createOrg(v, "other");
    await createRole(v, other, "auditor", "la");
    await expectStatus(v.asMaster("POST", `/orgs/${orgId}/principals`, { name: "ann", role: "auditor" }), 400);
    await expectStatus(v.asMaster("POST", `/orgs/${orgId}/principals`, { name: "ann", role: "superuser" }), 400);
    await createRole(v, orgId, "auditor", "la");
    await expectStatus(v.asMaster("POST", `/orgs/${orgId}/principals`, { name: "ann", role: "auditor" }), 201);
  });

  it("keeps principal names unique within an org only", async () => {
    const v = buildTestVault();
    const a = await createOrg(v, "a");
    const b = await createOrg(v, "b");
    await expectStatus(v.asMaster("POST", `/orgs/${a}/principals`, { name: "ann", role: "reader" }), 201);
    await expectStatus(v.asMaster("POST", `/orgs/${a}/principals`, { name: "ann", role: "owner" }), 409);
    await expectStatus(v.asMaster("POST", `/orgs/${b}/principals`, { name: "ann", role: "reader" }), 201);
  });

  it.each([
    ["no role", { name: "ann" }],
    ["no name", { role: "reader" }],
    ["a role that is not a string", { name: "ann", role: 1 }],
    ["a blank name", { name: " ", role: "reader" }],
  ])("answers 400 to %s", async (_label, body) => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    await expectStatus(v.asMaster("POST", `/orgs/${orgId}/principals`, body), 400);
    expect(await expectStatus(v.asMaster("GET", `/orgs/${orgId}/principals`), 200)).toEqual({ principals: [] });
  });

  it("patches name, role and metadata; metadata is replaced", async () => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    const p = await createPrincipal(v, orgId, "reader", "ann");
    const path = `/orgs/${orgId}/principals/${p.id}`;
    await expectStatus(v.asMaster("PATCH", path, { metadata: { team: "red", seat: 1 } }), 200);
    const patched = await expectStatus(v.asMaster("PATCH", path, { name: "anne", role: "owner", metadata: { team: "blue" } }), 200);
    expect(patched).toMatchObject({ id: p.id, name: "anne", role: "owner", metadata: { team: "blue" } });
    expect(await expectStatus(v.asMaster("PATCH", path, {}), 200)).toEqual(patched);
  });

  it("refuses a PATCH to an unknown role (400) or a taken name (409), changing nothing", async () => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    const p = await createPrincipal(v, orgId, "reader", "ann");
    await createPrincipal(v, orgId, "reader", "bob");
    const path = `/orgs/${orgId}/principals/${p.id}`;
    await expectStatus(v.asMaster("PATCH", path, { role: "nope" }), 400);
    await expectStatus(v.asMaster("PATCH", path, { name: "bob", role: "owner" }), 409);
    expect(await expectStatus(v.asMaster("GET", path), 200)).toMatchObject({ name: "ann", role: "reader" });
  });

  it("answers 404 for a principal of another org on this org's path", async () => {
    const v = buildTestVault();
    const a = await createOrg(v, "a");
    const b = await createOrg(v, "b");
    const p = await createPrincipal(v, b, "reader");
    await expectStatus(v.asMaster("GET", `/orgs/${a}/principals/${p.id}`), 404);
    await expectStatus(v.asMaster("PATCH", `/orgs/${a}/principals/${p.id}`, { name: "x" }), 404);
    await expectStatus(v.asMaster("DELETE", `/orgs/${a}/principals/${p.id}`), 404);
    await expectStatus(v.asMaster("POST", `/orgs/${a}/principals/${p.id}/keys`, { name: "k" }), 404);
    await expectStatus(v.asMaster("GET", `/orgs/${a}/principals/${p.id}/keys`), 404);
    await expectStatus(v.asMaster("DELETE", `/orgs/${a}/principals/${p.id}/keys/${p.keyId}`), 404);
    await expectStatus(v.request("GET", "/me", { token: p.token }), 200);
  });

  it("refuses to delete a principal with an active key (409), then deletes it once the key is revoked", async () => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    const p = await createPrincipal(v, orgId, "reader");
    const res = await expectStatus(v.asMaster("DELETE", `/orgs/${orgId}/principals/${p.id}`), 409);
    expect(res.message).toContain("revoke");
    await expectStatus(v.asMaster("DELETE", `/orgs/${orgId}/principals/${p.id}/keys/${p.keyId}`), 200);
    expect(await expectStatus(v.asMaster("DELETE", `/orgs/${orgId}/principals/${p.id}`), 200)).toEqual({ deleted: true });
    await expectStatus(v.asMaster("GET", `/orgs/${orgId}/principals/${p.id}`), 404);
    await expectStatus(v.asMaster("DELETE", `/orgs/${orgId}/principals/${p.id}`), 404);
  });

  it("counts a not-yet-valid key as active, and a key past valid_before as not", async () => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    const body = await expectStatus(v.asMaster("POST", `/orgs/${orgId}/principals`, { name: "ann", role: "reader" }), 201);
    const id = body.id as string;
    await createPrincipalKey(v, orgId, id, { valid_after: nowSeconds(v) + 3600, valid_before: nowSeconds(v) + 7200 });
    await expectStatus(v.asMaster("DELETE", `/orgs/${orgId}/principals/${id}`), 409);
    v.clock.advance(7201_000);
    await expectStatus(v.asMaster("DELETE", `/orgs/${orgId}/principals/${id}`), 200);
  });
});
