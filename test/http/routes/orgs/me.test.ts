import { describe, expect, it } from "vitest";
import { buildTestVault } from "../../../support/helpers.js";
import { createPrincipalKey, createOrg, createPrincipal, createRole, expectStatus, nowSeconds } from "../../../support/org-helpers.js";

describe("/me", () => {
  it("shows the calling principal with its key summaries, never a token", async () => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    const p = await createPrincipal(v, orgId, "writer", "ann");
    const me = await expectStatus(v.request("GET", "/me", { token: p.token }), 200);
    expect(me).toEqual({
      id: p.id,
      name: "ann",
      role: "writer",
      org_id: orgId,
      metadata: {},
      created_at: nowSeconds(v),
      keys: [{ id: p.keyId, name: "laptop", valid_after: null, valid_before: null, created_at: nowSeconds(v) }],
    });
    expect(JSON.stringify(me)).not.toContain(p.token);
  });

  it("replaces the metadata with PATCH and answers the same shape as GET", async () => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    const p = await createPrincipal(v, orgId, "reader");
    await expectStatus(v.request("PATCH", "/me", { token: p.token, body: { metadata: { a: 1, b: 2 } } }), 200);
    const patched = await expectStatus(v.request("PATCH", "/me", { token: p.token, body: { metadata: { c: [3] } } }), 200);
    expect(patched).toEqual(await expectStatus(v.request("GET", "/me", { token: p.token }), 200));
    expect(patched.metadata).toEqual({ c: [3] });
    expect(await expectStatus(v.request("PATCH", "/me", { token: p.token, body: {} }), 200)).toEqual(patched);
  });

  it("does not let a principal change its own name or role through PATCH /me", async () => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    const p = await createPrincipal(v, orgId, "reader", "ann");
    const res = await expectStatus(v.request("PATCH", "/me", { token: p.token, body: { role: "owner", name: "root" } }), 200);
    expect(res).toMatchObject({ name: "ann", role: "reader" });
  });

  it.each([
    ["an array", [1, 2]],
    ["a string", "x"],
    ["over 16 KiB", { blob: "x".repeat(16 * 1024) }],
  ])("refuses metadata that is %s (400) and keeps the old one", async (_label, metadata) => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    const p = await createPrincipal(v, orgId, "reader");
    await expectStatus(v.request("PATCH", "/me", { token: p.token, body: { metadata: { keep: true } } }), 200);
    await expectStatus(v.request("PATCH", "/me", { token: p.token, body: { metadata } }), 400);
    expect((await expectStatus(v.request("GET", "/me", { token: p.token }), 200)).metadata).toEqual({ keep: true });
  });

  it("takes metadata: null as metadata left out: the old one stays (docs/contract.md §14)", async () => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    const p = await createPrincipal(v, orgId, "reader");
    await expectStatus(v.request("PATCH", "/me", { token: p.token, body: { metadata: { keep: true } } }), 200);
    const res = await v.request("PATCH", "/me", { token: p.token, body: { metadata: null } });
    expect(res.status).toBeLessThan(500);
    expect((await expectStatus(v.request("GET", "/me", { token: p.token }), 200)).metadata).toEqual({ keep: true });
  });

  it("answers 403 to the master key and 401 without a token or with an unknown principal token", async () => {
    const v = buildTestVault();
    await expectStatus(v.asMaster("GET", "/me"), 403);
    await expectStatus(v.asMaster("PATCH", "/me", { metadata: {} }), 403);
    await expectStatus(v.asMaster("POST", "/me/keys", { name: "x" }), 403);
    await expectStatus(v.request("GET", "/me", { token: null }), 401);
    await expectStatus(v.request("GET", "/me", { token: `vpk_${"A".repeat(43)}` }), 401);
  });
});

describe("/me/keys", () => {
  it("makes a new working key, shown once, and any number of them", async () => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    const p = await createPrincipal(v, orgId, "reader");
    const tokens: string[] = [];
    for (let i = 0; i < 5; i++) {
      const created = await expectStatus(v.request("POST", "/me/keys", { token: p.token, body: { name: `key ${i}` } }), 201);
      expect(created).toEqual({
        id: expect.stringMatching(/^pk_/),
        name: `key ${i}`,
        key: expect.stringMatching(/^vpk_[A-Za-z0-9_-]{43}$/),
        valid_after: null,
        valid_before: null,
        created_at: nowSeconds(v),
      });
      tokens.push(created.key as string);
    }
    for (const token of tokens) expect((await expectStatus(v.request("GET", "/me", { token }), 200)).id).toBe(p.id);
    expect((await expectStatus(v.request("GET", "/me", { token: p.token }), 200)).keys).toHaveLength(6);
  });

  it("caps a new key's window at the calling key's valid_before", async () => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    const p = await createPrincipal(v, orgId, "reader");
    const hourLeft = nowSeconds(v) + 3600;
    const limited = await createPrincipalKey(v, orgId, p.id, { name: "one hour", valid_before: hourLeft });
    const asLimited = (body: Record<string, unknown>) => v.request("POST", "/me/keys", { token: limited.token, body });
    // No valid_before asked: the creator's, not "never".
    expect((await expectStatus(asLimited({ name: "open" }), 201)).valid_before).toBe(hourLeft);
    // A later one asked: capped.
    expect((await expectStatus(asLimited({ name: "later", valid_before: hourLeft + 86_400 }), 201)).valid_before).toBe(hourLeft);
    // An earlier one asked: kept.
    expect((await expectStatus(asLimited({ name: "earlier", valid_before: hourLeft - 60 }), 201)).valid_before).toBe(hourLeft - 60);
    // A window that would start after the creator's ends: 400, nothing made.
    const refused = await expectStatus(asLimited({ name: "late start", valid_after: hourLeft + 60 }), 400);
    expect(refused.error).toMatch(/valid_before/);
    expect((await expectStatus(v.request("GET", "/me/keys", { token: p.token }), 200)).keys).toHaveLength(5);
    // A key without an end still makes keys without an end.
    expect((await expectStatus(v.request("POST", "/me/keys", { token: p.token, body: { name: "free" } }), 201)).valid_before).toBeNull();
  });

  it("lists the caller's own keys with GET /me/keys, as GET /me shows them, never a token", async () => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    const p = await createPrincipal(v, orgId, "reader");
    const other = await createPrincipal(v, orgId, "writer");
    await expectStatus(v.request("POST", "/me/keys", { token: p.token, body: { name: "second", valid_after: nowSeconds(v) } }), 201);
    const listed = await expectStatus(v.request("GET", "/me/keys", { token: p.token }), 200);
    const profile = await expectStatus(v.request("GET", "/me", { token: p.token }), 200);
    expect(listed).toEqual({ keys: profile.keys });
    expect((listed.keys as { id: string }[]).map((k) => k.id)).not.toContain(other.keyId);
    expect(JSON.stringify(listed)).not.toContain("vpk_");
    const page = await expectStatus(v.request("GET", "/me/keys?limit=1", { token: p.token }), 200);
    expect(page.keys).toEqual([(listed.keys as unknown[])[0]]);
    const rest = await expectStatus(v.request("GET", `/me/keys?cursor=${page.next_cursor as string}`, { token: p.token }), 200);
    expect(rest).toEqual({ keys: [(listed.keys as unknown[])[1]] });
    await expectStatus(v.asMaster("GET", "/me/keys"), 403);
  });

  it("refuses a key whose valid_before is not after now and valid_after (400)", async () => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    const p = await createPrincipal(v, orgId, "reader");
    const now = nowSeconds(v);
    await expectStatus(v.request("POST", "/me/keys", { token: p.token, body: { name: "k", valid_before: now - 5 } }), 400);
    await expectStatus(
      v.request("POST", "/me/keys", { token: p.token, body: { name: "k", valid_after: now + 50, valid_before: now + 40 } }),
      400,
    );
    expect((await expectStatus(v.request("GET", "/me", { token: p.token }), 200)).keys).toHaveLength(1);
  });

  it("revokes a key at once, the one presented included", async () => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    const p = await createPrincipal(v, orgId, "reader");
    const second = await expectStatus(v.request("POST", "/me/keys", { token: p.token, body: { name: "second" } }), 201);
    expect(await expectStatus(v.request("DELETE", `/me/keys/${second.id as string}`, { token: p.token }), 200)).toEqual({ deleted: true });
    await expectStatus(v.request("GET", "/me", { token: second.key as string }), 401);
    await expectStatus(v.request("DELETE", `/me/keys/${p.keyId}`, { token: p.token }), 200);
    await expectStatus(v.request("GET", "/me", { token: p.token }), 401);
  });

  it("does not revoke another principal's key (404), even in the same org", async () => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    const ann = await createPrincipal(v, orgId, "owner", "ann");
    const bob = await createPrincipal(v, orgId, "reader", "bob");
    await expectStatus(v.request("DELETE", `/me/keys/${bob.keyId}`, { token: ann.token }), 404);
    await expectStatus(v.request("GET", "/me", { token: bob.token }), 200);
  });
});

describe("principal key validity windows", () => {
  it("answers 401 before valid_after and accepts the key from then on", async () => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    const p = await createPrincipal(v, orgId, "reader");
    const later = await createPrincipalKey(v, orgId, p.id, { valid_after: nowSeconds(v) + 60 });
    await expectStatus(v.request("GET", "/me", { token: later.token }), 401);
    v.clock.advance(59_000);
    await expectStatus(v.request("GET", "/me", { token: later.token }), 401);
    v.clock.advance(1_000);
    await expectStatus(v.request("GET", "/me", { token: later.token }), 200);
  });

  it("accepts the key until valid_before and answers 401 after it", async () => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    const p = await createPrincipal(v, orgId, "reader");
    const brief = await createPrincipalKey(v, orgId, p.id, { valid_before: nowSeconds(v) + 60 });
    v.clock.advance(60_000);
    await expectStatus(v.request("GET", "/me", { token: brief.token }), 200);
    v.clock.advance(1);
    await expectStatus(v.request("GET", "/me", { token: brief.token }), 401);
    await expectStatus(v.request("GET", `/orgs/${orgId}/secrets`, { token: brief.token }), 401);
  });
});

describe("roles apply at once", () => {
  it("a new role given to a principal applies to its very next request", async () => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    const p = await createPrincipal(v, orgId, "reader");
    const create = () => v.request("POST", `/orgs/${orgId}/secrets`, { token: p.token, body: { key: "k", value: "v" } });
    await expectStatus(create(), 403);
    await expectStatus(v.asMaster("PATCH", `/orgs/${orgId}/principals/${p.id}`, { role: "writer" }), 200);
    await expectStatus(create(), 201);
    expect((await expectStatus(v.request("GET", "/me", { token: p.token }), 200)).role).toBe("writer");
  });

  it("a custom role's new permissions apply to its principals' very next request", async () => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    await createRole(v, orgId, "lister", "l");
    const p = await createPrincipal(v, orgId, "lister");
    await expectStatus(v.request("GET", `/orgs/${orgId}/secrets`, { token: p.token }), 200);
    await expectStatus(v.asMaster("PATCH", `/orgs/${orgId}/roles/lister`, { permissions: "r" }), 200);
    await expectStatus(v.request("GET", `/orgs/${orgId}/secrets`, { token: p.token }), 403);
  });
});
