import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { openDatabase } from "../../../src/store/sqlite/db.js";
import { schemaSections } from "../../../src/store/sqlite/migrate.js";
import { buildTestVault, itSqlite } from "../../support/helpers.js";
import type { TestVault } from "../../support/helpers.js";
import { createOrg, createPrincipal, expectStatus, nowSeconds } from "../../support/org-helpers.js";

// A key minted with POST /me/keys records the key that minted it; revoking a key
// revokes every key it minted, transitively, in the same transaction, with a
// `key.deleted` row for each (docs/orgs.md "Principal keys"). Both engines (no .sqlite/.pg suffix).

interface Family {
  v: TestVault;
  orgId: string;
  principalId: string;
  root: { keyId: string; token: string };
  child: { id: string; token: string };
  grandchild: { id: string; token: string };
}

async function mint(v: TestVault, token: string, name: string, extra: Record<string, unknown> = {}): Promise<{ id: string; token: string; validBefore: number | null }> {
  const body = await expectStatus(v.request("POST", "/me/keys", { token, body: { name, ...extra } }), 201);
  return { id: body.id as string, token: body.key as string, validBefore: body.valid_before as number | null };
}

/** The master key's key (root), a child minted by it, a grandchild minted by the child. */
async function family(): Promise<Family> {
  const v = buildTestVault();
  const orgId = await createOrg(v);
  const p = await createPrincipal(v, orgId, "owner");
  const child = await mint(v, p.token, "child");
  const grandchild = await mint(v, child.token, "grandchild");
  return { v, orgId, principalId: p.id, root: { keyId: p.keyId, token: p.token }, child, grandchild };
}

const status = async (v: TestVault, token: string) => (await v.request("GET", "/me", { token })).status;

/** The org's key.deleted entries, newest first, as [key, principal_id]. */
async function deletions(v: TestVault, orgId: string): Promise<[string | null, string | null][]> {
  const rows = await v.query("SELECT key, principal_id FROM audit WHERE scope = ? AND action = 'key.deleted' ORDER BY id", orgId);
  return rows.map((r) => [r.key as string | null, r.principal_id as string | null]);
}

describe("principal key lineage", () => {
  it("records the minting key as the parent; keys of the master key have none", async () => {
    const { v, root, child, grandchild } = await family();
    const parents = Object.fromEntries(
      (await v.query("SELECT id, parent_key_id FROM principal_keys")).map((r) => [r.id as string, r.parent_key_id as string | null]),
    );
    expect(parents).toEqual({ [root.keyId]: null, [child.id]: root.keyId, [grandchild.id]: child.id });
  });

  it("revoking a key with DELETE /me/keys revokes its child and grandchild at once, each audited", async () => {
    const { v, orgId, principalId, root, child, grandchild } = await family();
    const sibling = await mint(v, root.token, "sibling");
    await expectStatus(v.request("DELETE", `/me/keys/${child.id}`, { token: root.token }), 200);
    expect(await status(v, child.token)).toBe(401);
    expect(await status(v, grandchild.token)).toBe(401);
    expect(await status(v, root.token)).toBe(200);
    expect(await status(v, sibling.token)).toBe(200);
    expect(new Set((await deletions(v, orgId)).map(([key]) => key))).toEqual(new Set([child.id, grandchild.id]));
    expect((await deletions(v, orgId)).every(([, by]) => by === principalId)).toBe(true);
    const listed = (await expectStatus(v.request("GET", "/me/keys", { token: root.token }), 200)).keys as { id: string }[];
    expect(listed.map((k) => k.id).sort()).toEqual([root.keyId, sibling.id].sort());
  });

  it("revoking the master key's key through the org route revokes everything it minted, each audited with principal_id null", async () => {
    const { v, orgId, principalId, root, child, grandchild } = await family();
    await expectStatus(v.asMaster("DELETE", `/orgs/${orgId}/principals/${principalId}/keys/${root.keyId}`), 200);
    for (const token of [root.token, child.token, grandchild.token]) expect(await status(v, token)).toBe(401);
    const rows = await deletions(v, orgId);
    expect(rows[0]).toEqual([root.keyId, null]);
    expect(new Set(rows.map(([key]) => key))).toEqual(new Set([root.keyId, child.id, grandchild.id]));
    expect(rows.every(([, by]) => by === null)).toBe(true);
    // Nothing is left, so the principal may be deleted.
    await expectStatus(v.asMaster("DELETE", `/orgs/${orgId}/principals/${principalId}`), 200);
  });

  it("a key may revoke itself, and its descendants go with it", async () => {
    const { v, root, child, grandchild } = await family();
    await expectStatus(v.request("DELETE", `/me/keys/${child.id}`, { token: child.token }), 200);
    expect(await status(v, child.token)).toBe(401);
    expect(await status(v, grandchild.token)).toBe(401);
    expect(await status(v, root.token)).toBe(200);
  });

  it("revoking a child leaves its parent working", async () => {
    const { v, orgId, root, child, grandchild } = await family();
    await expectStatus(v.request("DELETE", `/me/keys/${grandchild.id}`, { token: child.token }), 200);
    expect(await status(v, grandchild.token)).toBe(401);
    expect(await status(v, child.token)).toBe(200);
    expect(await status(v, root.token)).toBe(200);
    expect(await deletions(v, orgId)).toEqual([[grandchild.id, expect.any(String)]]);
  });

  it("a grandchild never outlives any of its ancestors' valid_before", async () => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    const p = await createPrincipal(v, orgId, "owner");
    const child = await mint(v, p.token, "child", { valid_before: nowSeconds(v) + 3600 });
    const grandchild = await mint(v, child.token, "grandchild", { valid_before: nowSeconds(v) + 86_400 });
    expect(grandchild.validBefore).toBe(nowSeconds(v) + 3600);
    const open = await mint(v, grandchild.token, "open");
    expect(open.validBefore).toBe(nowSeconds(v) + 3600);
    v.clock.advance(3601 * 1000);
    for (const token of [child.token, grandchild.token, open.token]) expect(await status(v, token)).toBe(401);
    expect(await status(v, p.token)).toBe(200);
  });

  it("a key minting while its parent is revoked leaves no live key behind", async () => {
    const { v, orgId, root, child } = await family();
    const answers = await Promise.all([
      ...Array.from({ length: 6 }, (_, i) => v.request("POST", "/me/keys", { token: child.token, body: { name: `race-${i}` } })),
      v.request("DELETE", `/me/keys/${child.id}`, { token: root.token }),
      ...Array.from({ length: 6 }, (_, i) => v.request("POST", "/me/keys", { token: child.token, body: { name: `late-${i}` } })),
    ]);
    const minted: string[] = [];
    for (const res of answers) {
      expect([200, 201, 401]).toContain(res.status);
      if (res.status === 201) minted.push(((await res.json()) as { key: string }).key);
    }
    for (const token of minted) expect(await status(v, token)).toBe(401);
    const left = await v.query("SELECT id FROM principal_keys WHERE org_id = ?", orgId);
    expect(left.map((r) => r.id)).toEqual([root.keyId]);
  });

  itSqlite("upgrading a database gives existing keys no parent", () => {
    const dir = mkdtempSync(join(tmpdir(), "ev-lineage-"));
    try {
      const file = join(dir, "vault.db");
      const old = new Database(file);
      for (const section of schemaSections().filter((s) => s.version <= 10)) old.exec(section.sql);
      old.pragma("user_version = 10");
      old.exec(`INSERT INTO orgs (id, name, metadata, created_at) VALUES ('org_a', 'a', '{}', 1);
        INSERT INTO principals (id, org_id, name, role, metadata, created_at) VALUES ('prn_a', 'org_a', 'p', 'owner', '{}', 1);
        INSERT INTO principal_keys (id, principal_id, org_id, name, token_hash, created_at) VALUES ('pk_a', 'prn_a', 'org_a', 'k', 'h', 1);`);
      old.close();
      const db = openDatabase(file);
      expect(db.prepare("SELECT id, parent_key_id FROM principal_keys").all()).toEqual([{ id: "pk_a", parent_key_id: null }]);
      db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
