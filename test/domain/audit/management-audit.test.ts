import { describe, expect, inject, it } from "vitest";
import { verifyAuditChain } from "../../../src/store/sqlite/audit/verify.js";
import { verifyPgAuditChains } from "../../../src/store/pg/audit/verify.js";
import { openPgPool } from "../../../src/store/pg/index.js";
import { SqliteEngine } from "../../../src/store/sqlite/engine.js";
import { buildTestVault } from "../../support/helpers.js";
import type { TestVault } from "../../support/helpers.js";
import { createOrg, createPrincipal, expectStatus } from "../../support/org-helpers.js";

// Management of orgs, principals, roles and principal keys is audited (docs/audit.md,
// "Management changes"): each change writes exactly one row in the same transaction, in
// the org's log (or the global log for org.created / org.deleted); a refused change
// writes none. Runs on both engines (its name has no .sqlite/.pg suffix).

interface Row {
  scope: string;
  action: string;
  key: string | null;
  actor: string | null;
  principal_id: string | null;
}

/** Every audit row, oldest first. */
async function rows(v: TestVault): Promise<Row[]> {
  return (await v.query("SELECT scope, action, key, actor, principal_id FROM audit ORDER BY id")) as unknown as Row[];
}

/** Runs `act` and returns the audit rows it wrote. */
async function written(v: TestVault, act: () => Promise<unknown>): Promise<Row[]> {
  const before = (await rows(v)).length;
  await act();
  return (await rows(v)).slice(before);
}

/** The audit chain verifies, on the engine under test. */
async function expectChainIntact(v: TestVault): Promise<void> {
  const keys = v.cipher.auditChainKeys();
  if (v.engine instanceof SqliteEngine) {
    expect(verifyAuditChain(v.engine.db, keys)).toMatchObject({ ok: true });
    return;
  }
  const schema = ((await v.query("SELECT current_schema() AS s"))[0] as { s: string }).s;
  const url = new URL(inject("pgAdminUrl") as string);
  url.searchParams.set("options", `-c search_path=${schema}`);
  const pool = await openPgPool({ url: url.toString(), poolSize: 1 });
  try {
    const report = await verifyPgAuditChains(pool, keys);
    expect(report, JSON.stringify(report)).toMatchObject({ ok: true });
  } finally {
    await pool.end();
  }
}

const MASTER_IN_ORG = (orgId: string) => ({ scope: orgId, actor: "master", principal_id: null });

describe("management changes in the audit log", () => {
  it("records org, principal, role and principal key changes by the master key, one row each, never a token", async () => {
    const v = buildTestVault();
    let orgId = "";
    expect(
      await written(v, async () => {
        orgId = (await expectStatus(v.asMaster("POST", "/orgs", { name: "acme", metadata: { tier: "gold" } }), 201)).id as string;
      }),
    ).toEqual([{ scope: "global", action: "org.created", key: orgId, actor: "master", principal_id: null }]);

    let principalId = "";
    expect(
      await written(v, async () => {
        principalId = (await expectStatus(v.asMaster("POST", `/orgs/${orgId}/principals`, { name: "ann", role: "reader" }), 201)).id as string;
      }),
    ).toEqual([{ action: "principal.created", key: principalId, ...MASTER_IN_ORG(orgId) }]);

    expect(
      await written(v, () => expectStatus(v.asMaster("POST", `/orgs/${orgId}/roles`, { name: "everything", permissions: "rRlLcCpPaAmMdD" }), 201)),
    ).toEqual([{ action: "role.created", key: "everything", ...MASTER_IN_ORG(orgId) }]);

    expect(
      await written(v, () => expectStatus(v.asMaster("PATCH", `/orgs/${orgId}/principals/${principalId}`, { role: "everything" }), 200)),
    ).toEqual([{ action: "principal.updated", key: principalId, ...MASTER_IN_ORG(orgId) }]);

    expect(
      await written(v, () => expectStatus(v.asMaster("PATCH", `/orgs/${orgId}/roles/everything`, { permissions: "rl" }), 200)),
    ).toEqual([{ action: "role.updated", key: "everything", ...MASTER_IN_ORG(orgId) }]);

    let key = { id: "", token: "" };
    expect(
      await written(v, async () => {
        const body = await expectStatus(v.asMaster("POST", `/orgs/${orgId}/principals/${principalId}/keys`, { name: "laptop" }), 201);
        key = { id: body.id as string, token: body.key as string };
      }),
    ).toEqual([{ action: "key.created", key: key.id, ...MASTER_IN_ORG(orgId) }]);

    expect(
      await written(v, () => expectStatus(v.asMaster("DELETE", `/orgs/${orgId}/principals/${principalId}/keys/${key.id}`), 200)),
    ).toEqual([{ action: "key.deleted", key: key.id, ...MASTER_IN_ORG(orgId) }]);

    expect(
      await written(v, () => expectStatus(v.asMaster("PATCH", `/orgs/${orgId}/principals/${principalId}`, { role: "reader" }), 200)),
    ).toEqual([{ action: "principal.updated", key: principalId, ...MASTER_IN_ORG(orgId) }]);

    expect(await written(v, () => expectStatus(v.asMaster("DELETE", `/orgs/${orgId}/roles/everything`), 200))).toEqual([
      { action: "role.deleted", key: "everything", ...MASTER_IN_ORG(orgId) },
    ]);

    expect(await written(v, () => expectStatus(v.asMaster("DELETE", `/orgs/${orgId}/principals/${principalId}`), 200))).toEqual([
      { action: "principal.deleted", key: principalId, ...MASTER_IN_ORG(orgId) },
    ]);

    expect(await written(v, () => expectStatus(v.asMaster("DELETE", `/orgs/${orgId}`), 200))).toEqual([
      { scope: "global", action: "org.deleted", key: orgId, actor: "master", principal_id: null },
    ]);

    expect(JSON.stringify(await rows(v))).not.toContain(key.token);
    await expectChainIntact(v);
  });

  it("shows the org's management rows to its auditors and org.created / org.deleted to the operator", async () => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    const auditor = await createPrincipal(v, orgId, "admin", "auditor");
    await expectStatus(v.asMaster("POST", `/orgs/${orgId}/roles`, { name: "ops", permissions: "rl" }), 201);
    const org = (await expectStatus(v.request("GET", `/orgs/${orgId}/audit`, { token: auditor.token }), 200)) as {
      entries: { action: string; key: string | null; principal_id: string | null }[];
    };
    expect(org.entries.map((e) => [e.action, e.key, e.principal_id])).toEqual([
      ["role.created", "ops", null],
      ["key.created", auditor.keyId, null],
      ["principal.created", auditor.id, null],
    ]);
    const global = (await expectStatus(v.asMaster("GET", `/audit?action=org.created&key=${orgId}`), 200)) as {
      entries: { action: string; key: string; actor: string }[];
    };
    expect(global.entries).toEqual([expect.objectContaining({ action: "org.created", key: orgId, actor: "master" })]);
  });

  it("records a principal's own key and metadata changes with its principal_id", async () => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    const p = await createPrincipal(v, orgId, "reader");
    const self = { scope: orgId, actor: p.keyId, principal_id: p.id };

    expect(await written(v, () => expectStatus(v.request("PATCH", "/me", { token: p.token, body: { metadata: { team: "ops" } } }), 200))).toEqual([
      { action: "principal.updated", key: p.id, ...self },
    ]);
    let minted = { id: "", token: "" };
    expect(
      await written(v, async () => {
        const body = await expectStatus(v.request("POST", "/me/keys", { token: p.token, body: { name: "ci" } }), 201);
        minted = { id: body.id as string, token: body.key as string };
      }),
    ).toEqual([{ action: "key.created", key: minted.id, ...self }]);
    expect(await written(v, () => expectStatus(v.request("DELETE", `/me/keys/${minted.id}`, { token: p.token }), 200))).toEqual([
      { action: "key.deleted", key: minted.id, ...self },
    ]);
    // A PATCH that names no field it may change changes nothing and writes nothing.
    expect(await written(v, () => expectStatus(v.request("PATCH", "/me", { token: p.token, body: { role: "owner" } }), 200))).toEqual([]);
    expect(await written(v, () => expectStatus(v.asMaster("PATCH", `/orgs/${orgId}/principals/${p.id}`, {}), 200))).toEqual([]);
    expect(JSON.stringify(await rows(v))).not.toContain(minted.token);
    await expectChainIntact(v);
  });

  it("records org webhook changes in the org's log", async () => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    let hookId = "";
    expect(
      await written(v, async () => {
        hookId = (await expectStatus(v.asMaster("POST", `/orgs/${orgId}/webhooks`, { url: "https://93.184.216.34/hook", events: ["*"] }), 201)).id as string;
      }),
    ).toEqual([{ action: "webhook.created", key: hookId, ...MASTER_IN_ORG(orgId) }]);
    expect(await written(v, () => expectStatus(v.asMaster("DELETE", `/orgs/${orgId}/webhooks/${hookId}`), 200))).toEqual([
      { action: "webhook.deleted", key: hookId, ...MASTER_IN_ORG(orgId) },
    ]);
  });

  it("writes no management row for a refused change (409, 404, 400); a 403 leaves only its auth.denied row", async () => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    const p = await createPrincipal(v, orgId, "owner", "ann");
    await expectStatus(v.asMaster("POST", `/orgs/${orgId}/roles`, { name: "ops", permissions: "rl" }), 201);
    await expectStatus(v.asMaster("PATCH", `/orgs/${orgId}/principals/${p.id}`, { role: "ops" }), 200);

    const refusals: [string, () => Promise<unknown>][] = [
      ["org name taken", () => expectStatus(v.asMaster("POST", "/orgs", { name: "acme" }), 409)],
      ["org not empty", () => expectStatus(v.asMaster("DELETE", `/orgs/${orgId}`), 409)],
      ["principal name taken", () => expectStatus(v.asMaster("POST", `/orgs/${orgId}/principals`, { name: "ann", role: "reader" }), 409)],
      ["unknown role", () => expectStatus(v.asMaster("POST", `/orgs/${orgId}/principals`, { name: "bob", role: "nope" }), 400)],
      ["principal has active keys", () => expectStatus(v.asMaster("DELETE", `/orgs/${orgId}/principals/${p.id}`), 409)],
      ["unknown principal", () => expectStatus(v.asMaster("PATCH", `/orgs/${orgId}/principals/prn_AAAAAAAAAAAAAAAAAAAAAAAAAA`, { role: "reader" }), 404)],
      ["role name taken", () => expectStatus(v.asMaster("POST", `/orgs/${orgId}/roles`, { name: "ops", permissions: "r" }), 409)],
      ["role assigned", () => expectStatus(v.asMaster("DELETE", `/orgs/${orgId}/roles/ops`), 409)],
      ["bad letters", () => expectStatus(v.asMaster("PATCH", `/orgs/${orgId}/roles/ops`, { permissions: "rx" }), 400)],
      ["unknown key", () => expectStatus(v.asMaster("DELETE", `/orgs/${orgId}/principals/${p.id}/keys/pk_AAAAAAAAAAAAAAAAAAAAAAAAAA`), 404)],
      ["bad metadata", () => expectStatus(v.request("PATCH", "/me", { token: p.token, body: { metadata: [1] } }), 400)],
    ];
    for (const [label, refuse] of refusals) {
      expect(await written(v, refuse), label).toEqual([]);
    }

    // 403: the master key on a built-in role, a principal key on management endpoints.
    expect(await written(v, () => expectStatus(v.asMaster("PATCH", `/orgs/${orgId}/roles/admin`, { permissions: "r" }), 403))).toEqual([
      { scope: "global", action: "auth.denied", key: null, actor: "master", principal_id: null },
    ]);
    expect(await written(v, () => expectStatus(v.asMaster("DELETE", `/orgs/${orgId}/roles/owner`), 403))).toEqual([
      { scope: "global", action: "auth.denied", key: null, actor: "master", principal_id: null },
    ]);
    const denied = { scope: orgId, action: "auth.denied", key: null, actor: p.keyId, principal_id: p.id };
    expect(
      await written(v, () => expectStatus(v.request("POST", `/orgs/${orgId}/principals`, { token: p.token, body: { name: "eve", role: "owner" } }), 403)),
    ).toEqual([denied]);
    expect(
      await written(v, () => expectStatus(v.request("PATCH", `/orgs/${orgId}/principals/${p.id}`, { token: p.token, body: { role: "owner" } }), 403)),
    ).toEqual([denied]);
    expect(await written(v, () => expectStatus(v.request("POST", "/orgs", { token: p.token, body: { name: "mine" } }), 403))).toEqual([denied]);
    await expectChainIntact(v);
  });
});
