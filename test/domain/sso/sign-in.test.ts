import { describe, expect, it } from "vitest";
import { SingleSignOn } from "../../../src/domain/sso/sign-in.js";
import type { SignInPolicy } from "../../../src/domain/sso/sign-in.js";
import { buildTestVault } from "../../support/helpers.js";
import { createOrg, expectStatus } from "../../support/org-helpers.js";

// The sign-in decision on both engines (docs/sso.md, "What a sign-in does"):
// create at the first sign-in, update the role at a later one, refuse without a
// role or an org; every outcome's audit row; the link survives a deleted principal.

async function setup() {
  const v = buildTestVault();
  const orgId = await createOrg(v);
  const sso = new SingleSignOn({ now: v.clock.now, principals: v.orgs.principals, principalKeys: v.orgs.principalKeys, audit: v.audit });
  const policy: SignInPolicy = { orgId, roleClaim: "groups", roleMap: [{ group: "devs", role: "writer" }, { group: "ops", role: "reader" }] };
  const mint = { keyName: "console sign-in", validBefore: v.clock.now() + 3_600_000 };
  const person = (groups: string[], sub = "sub-1", email = "ann@example.com") => ({ issuer: "https://idp.test", subject: sub, claims: { sub, email, groups } });
  const log = async () => (await v.query("SELECT action, key, actor, principal_id FROM audit WHERE scope = ? ORDER BY id", orgId)) as Array<Record<string, unknown>>;
  return { v, orgId, sso, policy, mint, person, log };
}

describe("SingleSignOn.signIn", () => {
  it("the first sign-in creates the principal and links the subject; the second finds it and changes only the role", async () => {
    const { v, orgId, sso, policy, mint, person, log } = await setup();
    const first = await v.tx.run((w) => sso.signIn(w, person(["devs"]), policy, mint, "203.0.113.5"));
    expect(first).toMatchObject({ kind: "signed_in", created: true, previousRole: null, principal: { name: "ann@example.com", role: "writer" } });
    if (first.kind !== "signed_in") throw new Error("refused");
    expect(first.key.validBefore).toBe(mint.validBefore);
    const same = await v.tx.run((w) => sso.signIn(w, person(["devs"]), policy, mint, null));
    expect(same).toMatchObject({ kind: "signed_in", created: false, previousRole: null, principal: { id: first.principal.id } });
    const changed = await v.tx.run((w) => sso.signIn(w, person(["ops"], "sub-1", "renamed@example.com"), policy, mint, null));
    expect(changed).toMatchObject({ kind: "signed_in", created: false, previousRole: "writer", principal: { id: first.principal.id, role: "reader", name: "ann@example.com" } });
    expect((await log()).map((r) => [r.action, r.actor])).toEqual([
      ["principal.created", "oidc:sub-1"],
      ["key.created", "oidc:sub-1"],
      ["key.created", "oidc:sub-1"],
      ["principal.updated", "oidc:sub-1"],
      ["key.created", "oidc:sub-1"],
    ]);
    expect((await expectStatus(v.asMaster("GET", `/orgs/${orgId}/principals`), 200)).principals).toHaveLength(1);
  });

  it("no mapped role: refused, a signin.refused row, nothing made", async () => {
    const { v, orgId, sso, policy, mint, person, log } = await setup();
    expect(await v.tx.run((w) => sso.signIn(w, person(["sales"]), policy, mint, null))).toEqual({ kind: "refused", reason: "no_role" });
    expect(await log()).toEqual([{ action: "signin.refused", key: "no_role", actor: "oidc:sub-1", principal_id: null }]);
    expect((await expectStatus(v.asMaster("GET", `/orgs/${orgId}/principals`), 200)).principals).toEqual([]);
  });

  it("an org that does not exist refuses (no_org, in the global log)", async () => {
    const { v, sso, policy, mint, person } = await setup();
    const outcome = await v.tx.run((w) => sso.signIn(w, person(["devs"]), { ...policy, orgId: "org_missing" }, mint, null));
    expect(outcome).toEqual({ kind: "refused", reason: "no_org" });
    expect(await v.query("SELECT action, key FROM audit WHERE scope = 'global' AND action = 'signin.refused'")).toEqual([{ action: "signin.refused", key: "no_org" }]);
  });

  it("a name another principal holds gets the subject added; a deleted principal is made again at the next sign-in", async () => {
    const { v, orgId, sso, policy, mint, person } = await setup();
    await expectStatus(v.asMaster("POST", `/orgs/${orgId}/principals`, { name: "ann@example.com", role: "reader" }), 201);
    const first = await v.tx.run((w) => sso.signIn(w, person(["devs"]), policy, mint, null));
    expect(first).toMatchObject({ kind: "signed_in", principal: { name: "ann@example.com (sub-1)" } });
    if (first.kind !== "signed_in") throw new Error("refused");
    await expectStatus(v.asMaster("DELETE", `/orgs/${orgId}/principals/${first.principal.id}/keys/${first.key.id}`), 200);
    await expectStatus(v.asMaster("DELETE", `/orgs/${orgId}/principals/${first.principal.id}`), 200);
    const again = await v.tx.run((w) => sso.signIn(w, person(["devs"]), policy, mint, null));
    expect(again).toMatchObject({ kind: "signed_in", created: true });
    if (again.kind !== "signed_in") throw new Error("refused");
    expect(again.principal.id).not.toBe(first.principal.id);
  });
});
