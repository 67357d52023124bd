import { describe, expect, it } from "vitest";
import { buildTestVault } from "../../../support/helpers.js";
import { createOrg, createPrincipal, createRole, expectStatus, nowSeconds } from "../../../support/org-helpers.js";

// Roles and principal keys, from the master key, and their OpenAPI declarations (docs/orgs.md); both engines.

describe("roles", () => {
  it("lists the four built-in roles with their exact permission strings, then custom roles", async () => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    await createRole(v, orgId, "auditor", "lRa");
    expect(await expectStatus(v.asMaster("GET", `/orgs/${orgId}/roles`), 200)).toEqual({
      roles: [
        { name: "reader", permissions: "rRl", builtin: true },
        { name: "writer", permissions: "rRlLcCpP", builtin: true },
        { name: "admin", permissions: "rRlLcCpPaAmM", builtin: true },
        { name: "owner", permissions: "rRlLcCpPaAmMdD", builtin: true },
        { name: "auditor", permissions: "lRa", builtin: false },
      ],
    });
  });

  it("pages roles across the built-in and custom ones", async () => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    await createRole(v, orgId, "one", "r");
    await createRole(v, orgId, "two", "l");
    const names: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await expectStatus(v.asMaster("GET", `/orgs/${orgId}/roles?limit=3${cursor ? `&cursor=${cursor}` : ""}`), 200);
      names.push(...(page.roles as { name: string }[]).map((r) => r.name));
      cursor = page.next_cursor as string | undefined;
    } while (cursor);
    expect(names).toEqual(["reader", "writer", "admin", "owner", "one", "two"]);
  });

  it.each([1, 2, 4, 5])("pages every role with limit=%i, also an org without custom roles", async (limit) => {
    const v = buildTestVault();
    const bare = await createOrg(v, "bare");
    const custom = await createOrg(v, "custom");
    await createRole(v, custom, "one", "r");
    const all = async (orgId: string): Promise<string[]> => {
      const names: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await expectStatus(v.asMaster("GET", `/orgs/${orgId}/roles?limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`), 200);
        names.push(...(page.roles as { name: string }[]).map((r) => r.name));
        cursor = page.next_cursor as string | undefined;
      } while (cursor);
      return names;
    };
    expect(await all(bare)).toEqual(["reader", "writer", "admin", "owner"]);
    expect(await all(custom)).toEqual(["reader", "writer", "admin", "owner", "one"]);
  });

  it("creates a custom role and answers {name, org_id, permissions}", async () => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    const role = await expectStatus(v.asMaster("POST", `/orgs/${orgId}/roles`, { name: "ci-bot_2", permissions: "rRlLcCpPaAmMdD" }), 201);
    expect(role).toEqual({ name: "ci-bot_2", org_id: orgId, permissions: "rRlLcCpPaAmMdD" });
  });

  it.each([
    ["an empty string", ""],
    ["a letter outside rRlLcCpPaAmMdD", "rx"],
    ["a repeated letter", "rr"],
    ["a space", "r l"],
    ["all 14 letters and one more", "rRlLcCpPaAmMdDr"],
  ])("refuses permissions with %s (400)", async (_label, permissions) => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    await expectStatus(v.asMaster("POST", `/orgs/${orgId}/roles`, { name: "bad", permissions }), 400);
    expect(((await expectStatus(v.asMaster("GET", `/orgs/${orgId}/roles`), 200)).roles as unknown[]).length).toBe(4);
  });

  it.each([
    ["starts with a digit", "1role"],
    ["has upper case", "Role"],
    ["is 65 characters", "r".repeat(65)],
    ["has a dot", "a.b"],
  ])("refuses a role name that %s (400)", async (_label, name) => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    await expectStatus(v.asMaster("POST", `/orgs/${orgId}/roles`, { name, permissions: "r" }), 400);
  });

  it("refuses a name taken by a built-in or custom role of the org (409), not by another org's", async () => {
    const v = buildTestVault();
    const a = await createOrg(v, "a");
    const b = await createOrg(v, "b");
    await expectStatus(v.asMaster("POST", `/orgs/${a}/roles`, { name: "owner", permissions: "r" }), 409);
    await createRole(v, a, "auditor", "la");
    await expectStatus(v.asMaster("POST", `/orgs/${a}/roles`, { name: "auditor", permissions: "l" }), 409);
    await createRole(v, b, "auditor", "l");
  });

  it("never modifies or deletes a built-in role (403)", async () => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    for (const name of ["reader", "writer", "admin", "owner"]) {
      await expectStatus(v.asMaster("PATCH", `/orgs/${orgId}/roles/${name}`, { permissions: "rRlLcCpPaAmMdD" }), 403);
      await expectStatus(v.asMaster("DELETE", `/orgs/${orgId}/roles/${name}`), 403);
    }
    const roles = (await expectStatus(v.asMaster("GET", `/orgs/${orgId}/roles`), 200)).roles;
    expect(roles).toContainEqual({ name: "reader", permissions: "rRl", builtin: true });
  });

  it("patches a custom role's permissions", async () => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    await createRole(v, orgId, "auditor", "l");
    expect(await expectStatus(v.asMaster("PATCH", `/orgs/${orgId}/roles/auditor`, { permissions: "la" }), 200)).toEqual({
      name: "auditor",
      org_id: orgId,
      permissions: "la",
    });
    await expectStatus(v.asMaster("PATCH", `/orgs/${orgId}/roles/auditor`, { permissions: "laa" }), 400);
    await expectStatus(v.asMaster("PATCH", `/orgs/${orgId}/roles/nobody`, { permissions: "l" }), 404);
  });

  it("refuses to delete a custom role a principal holds (409), then deletes it once unassigned", async () => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    await createRole(v, orgId, "auditor", "la");
    const p = await createPrincipal(v, orgId, "auditor");
    await expectStatus(v.asMaster("DELETE", `/orgs/${orgId}/roles/auditor`), 409);
    await expectStatus(v.asMaster("PATCH", `/orgs/${orgId}/principals/${p.id}`, { role: "reader" }), 200);
    expect(await expectStatus(v.asMaster("DELETE", `/orgs/${orgId}/roles/auditor`), 200)).toEqual({ deleted: true });
    await expectStatus(v.asMaster("DELETE", `/orgs/${orgId}/roles/auditor`), 404);
  });
});

describe("principal keys, from the master key", () => {
  it("makes a vpk_ token shown once, stored only as its SHA-256", async () => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    const p = await expectStatus(v.asMaster("POST", `/orgs/${orgId}/principals`, { name: "ann", role: "reader" }), 201);
    const created = await expectStatus(v.asMaster("POST", `/orgs/${orgId}/principals/${p.id as string}/keys`, { name: "laptop" }), 201);
    expect(created).toEqual({
      id: expect.stringMatching(/^pk_[a-z2-7]{26}$/),
      name: "laptop",
      key: expect.stringMatching(/^vpk_[A-Za-z0-9_-]{43}$/),
      valid_after: null,
      valid_before: null,
      created_at: nowSeconds(v),
    });
    const listed = await expectStatus(v.asMaster("GET", `/orgs/${orgId}/principals/${p.id as string}/keys`), 200);
    expect(listed).toEqual({ keys: [{ id: created.id, name: "laptop", valid_after: null, valid_before: null, created_at: nowSeconds(v) }] });
    const dump = JSON.stringify(await v.query("SELECT * FROM principal_keys"));
    expect(dump).not.toContain(created.key as string);
  });

  it("keeps the validity window in seconds", async () => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    const p = await createPrincipal(v, orgId, "reader");
    const after = nowSeconds(v) + 10;
    const before = nowSeconds(v) + 100;
    const created = await expectStatus(
      v.asMaster("POST", `/orgs/${orgId}/principals/${p.id}/keys`, { name: "ci", valid_after: after, valid_before: before }),
      201,
    );
    expect(created).toMatchObject({ valid_after: after, valid_before: before });
  });

  it.each([
    ["valid_before in the past", (now: number) => ({ name: "k", valid_before: now - 1 })],
    ["valid_before equal to now", (now: number) => ({ name: "k", valid_before: now })],
    ["valid_before not after valid_after", (now: number) => ({ name: "k", valid_after: now + 100, valid_before: now + 100 })],
    ["a fractional valid_after", (now: number) => ({ name: "k", valid_after: now + 0.5 })],
    ["a string valid_before", (now: number) => ({ name: "k", valid_before: String(now + 100) })],
    ["no name", () => ({})],
  ])("refuses a key with %s (400)", async (_label, body) => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    const p = await createPrincipal(v, orgId, "reader");
    await expectStatus(v.asMaster("POST", `/orgs/${orgId}/principals/${p.id}/keys`, body(nowSeconds(v))), 400);
    expect((await expectStatus(v.asMaster("GET", `/orgs/${orgId}/principals/${p.id}/keys`), 200)).keys).toHaveLength(1);
  });

  it("revokes a key at once: it vanishes from the list and its token gets 401", async () => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    const p = await createPrincipal(v, orgId, "reader");
    await expectStatus(v.request("GET", "/me", { token: p.token }), 200);
    await expectStatus(v.asMaster("DELETE", `/orgs/${orgId}/principals/${p.id}/keys/${p.keyId}`), 200);
    await expectStatus(v.request("GET", "/me", { token: p.token }), 401);
    expect(await expectStatus(v.asMaster("GET", `/orgs/${orgId}/principals/${p.id}/keys`), 200)).toEqual({ keys: [] });
    await expectStatus(v.asMaster("DELETE", `/orgs/${orgId}/principals/${p.id}/keys/${p.keyId}`), 404);
  });

  it("does not revoke another principal's key through this principal's path (404)", async () => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    const ann = await createPrincipal(v, orgId, "reader", "ann");
    const bob = await createPrincipal(v, orgId, "reader", "bob");
    await expectStatus(v.asMaster("DELETE", `/orgs/${orgId}/principals/${ann.id}/keys/${bob.keyId}`), 404);
    await expectStatus(v.request("GET", "/me", { token: bob.token }), 200);
  });
});

describe("OpenAPI", () => {
  it("documents every org, principal, role, key, /me and org-secret route with its permission", async () => {
    const v = buildTestVault();
    const doc = (await expectStatus(v.request("GET", "/openapi.json", { token: null }), 200)) as {
      paths: Record<string, Record<string, { "x-permission"?: string; requestBody?: unknown }>>;
    };
    const expected: [string, string, string][] = [
      ["/orgs", "post", "master"],
      ["/orgs", "get", "master"],
      ["/orgs/{org_id}", "get", "master"],
      ["/orgs/{org_id}", "delete", "master"],
      ["/orgs/{org_id}/principals", "post", "master"],
      ["/orgs/{org_id}/principals", "get", "master"],
      ["/orgs/{org_id}/principals/{id}", "get", "master"],
      ["/orgs/{org_id}/principals/{id}", "patch", "master"],
      ["/orgs/{org_id}/principals/{id}", "delete", "master"],
      ["/orgs/{org_id}/principals/{id}/keys", "post", "master"],
      ["/orgs/{org_id}/principals/{id}/keys", "get", "master"],
      ["/orgs/{org_id}/principals/{id}/keys/{key_id}", "delete", "master"],
      ["/orgs/{org_id}/roles", "post", "master"],
      ["/orgs/{org_id}/roles", "get", "master"],
      ["/orgs/{org_id}/roles/{name}", "patch", "master"],
      ["/orgs/{org_id}/roles/{name}", "delete", "master"],
      ["/me", "get", "principal"],
      ["/me", "patch", "principal"],
      ["/me/keys", "post", "principal"],
      ["/me/keys/{key_id}", "delete", "principal"],
      ["/orgs/{org_id}/secrets", "post", "org:c"],
      ["/orgs/{org_id}/secrets", "get", "org:l"],
      ["/orgs/{org_id}/secrets/{key}", "get", "org:r"],
      ["/orgs/{org_id}/secrets/{key}", "patch", "org:P"],
      ["/orgs/{org_id}/secrets/{key}", "delete", "org:d"],
      ["/orgs/{org_id}/prune", "post", "org:C"],
      ["/orgs/{org_id}/audit", "get", "org:a"],
    ];
    for (const [path, method, permission] of expected) {
      expect(doc.paths[path]?.[method]?.["x-permission"], `${method} ${path}`).toBe(permission);
    }
    expect(doc.paths["/orgs/{org_id}/secrets"]?.post?.requestBody).toMatchObject({
      content: { "application/json": { schema: { required: expect.arrayContaining(["key", "value"]) } } },
    });
  });
});
