import { describe, expect, it } from "vitest";
import { buildTestVault } from "../../support/helpers.js";
import { createOrg, createPrincipal, expectStatus } from "../../support/org-helpers.js";

interface Entry {
  id: string;
  timestamp: number;
  action: string;
  key: string | null;
  principal_id: string | null;
  ip: string | null;
}

async function setup() {
  const v = buildTestVault();
  const orgId = await createOrg(v);
  const owner = await createPrincipal(v, orgId, "owner");
  const base = `/orgs/${orgId}/secrets`;
  const audit = async (query = "", token = owner.token) =>
    (await expectStatus(v.request("GET", `/orgs/${orgId}/audit${query}`, { token }), 200)) as { entries: Entry[]; next_cursor?: string };
  return { v, orgId, owner, base, audit };
}

describe("GET /orgs/:org_id/audit", () => {
  it("records the org's secret operations with the principal behind each, newest first, never a value", async () => {
    const { v, owner, base, audit } = await setup();
    await expectStatus(v.request("POST", base, { token: owner.token, body: { key: "k", value: "s3cr3t-value", max_reads: 1 } }), 201);
    v.clock.advance(1000);
    await expectStatus(v.request("GET", `${base}/k`, { token: owner.token }), 200);
    const { entries } = await audit();
    const secretEntries = entries.filter((e) => e.action.startsWith("secret."));
    expect(secretEntries.map((e) => e.action)).toEqual(["secret.burned", "secret.read", "secret.created"]);
    for (const e of secretEntries) {
      expect(Object.keys(e).sort()).toEqual(["action", "id", "ip", "key", "principal_id", "timestamp"]);
      expect(e).toMatchObject({ key: "k", principal_id: owner.id });
    }
    expect(secretEntries[2]?.timestamp).toBe((secretEntries[0]?.timestamp ?? 0) - 1);
    expect(JSON.stringify(entries)).not.toContain("s3cr3t-value");
  });

  it("records sealing and the master key's operations with principal_id null", async () => {
    const { v, base, audit } = await setup();
    await expectStatus(v.asMaster("POST", base, { key: "k", value: "v", max_reads: 1, delete: false }), 201);
    await expectStatus(v.asMaster("GET", `${base}/k`), 200);
    const { entries } = await audit("?key=k");
    expect(entries.map((e) => [e.action, e.principal_id])).toEqual([
      ["secret.sealed", null],
      ["secret.read", null],
      ["secret.created", null],
    ]);
  });

  it("records principal key creation and revocation in the org's log", async () => {
    const { v, owner, audit } = await setup();
    const created = await expectStatus(v.request("POST", "/me/keys", { token: owner.token, body: { name: "ci" } }), 201);
    await expectStatus(v.request("DELETE", `/me/keys/${created.id as string}`, { token: owner.token }), 200);
    const { entries } = await audit("?key=" + (created.id as string));
    expect(entries.map((e) => [e.action, e.principal_id])).toEqual([
      ["key.deleted", owner.id],
      ["key.created", owner.id],
    ]);
    expect(JSON.stringify(entries)).not.toContain(created.key as string);
  });

  it("shows only the org's own entries, none of another org's or the global log", async () => {
    const { v, owner, base, audit } = await setup();
    const other = await createOrg(v, "other");
    await expectStatus(v.asMaster("POST", `/orgs/${other}/secrets`, { key: "theirs", value: "v" }), 201);
    await expectStatus(v.asMaster("POST", "/secrets", { key: "global", value: "v" }), 201);
    await expectStatus(v.request("POST", base, { token: owner.token, body: { key: "ours", value: "v" } }), 201);
    const keys = (await audit()).entries.map((e) => e.key);
    expect(keys).toContain("ours");
    expect(keys).not.toContain("theirs");
    expect(keys).not.toContain("global");
    const global = (await expectStatus(v.asMaster("GET", "/audit"), 200)) as { entries: Entry[] };
    expect(global.entries.map((e) => e.key)).not.toContain("ours");
  });

  it("filters by action, key and time (since inclusive, until exclusive)", async () => {
    const { v, owner, base, audit } = await setup();
    const t0 = Math.floor(v.clock.now() / 1000);
    await expectStatus(v.request("POST", base, { token: owner.token, body: { key: "a", value: "v" } }), 201);
    v.clock.advance(10_000);
    await expectStatus(v.request("POST", base, { token: owner.token, body: { key: "b", value: "v" } }), 201);
    v.clock.advance(10_000);
    await expectStatus(v.request("GET", `${base}/a`, { token: owner.token }), 200);
    expect((await audit("?action=secret.created")).entries.map((e) => e.key)).toEqual(["b", "a"]);
    expect((await audit("?key=a")).entries.map((e) => e.action)).toEqual(["secret.read", "secret.created"]);
    expect((await audit(`?since=${t0 + 10}&until=${t0 + 20}`)).entries.map((e) => e.key)).toEqual(["b"]);
  });

  it("pages with limit (default 100, at most 1000) and next_cursor", async () => {
    const { v, orgId, owner, base, audit } = await setup();
    for (let i = 0; i < 105; i++) {
      await expectStatus(v.request("POST", base, { token: owner.token, body: { key: `k${i}`, value: "v" } }), 201);
    }
    const first = await audit("?action=secret.created");
    expect(first.entries).toHaveLength(100);
    const rest = await audit(`?action=secret.created&cursor=${first.next_cursor as string}`);
    expect(rest.entries.map((e) => e.key)).toEqual(["k4", "k3", "k2", "k1", "k0"]);
    expect(rest.next_cursor).toBeUndefined();
    expect((await audit("?action=secret.created&limit=3")).entries).toHaveLength(3);
    expect((await audit("?action=secret.created&limit=1000")).entries).toHaveLength(105);
    await expectStatus(v.request("GET", `/orgs/${orgId}/audit?limit=1001`, { token: owner.token }), 400);
    await expectStatus(v.request("GET", `/orgs/${orgId}/audit?limit=0`, { token: owner.token }), 400);
    await expectStatus(v.request("GET", `/orgs/${orgId}/audit?since=soon`, { token: owner.token }), 400);
  });

  it("records its principals' denied requests (403) as auth.denied in the org's log, not the global one", async () => {
    const { v, orgId, base, audit } = await setup();
    const other = await createOrg(v, "other");
    const reader = await createPrincipal(v, orgId, "reader");
    await expectStatus(v.request("POST", base, { token: reader.token, body: { key: "k", value: "v" } }), 403);
    await expectStatus(v.request("GET", `/orgs/${other}/secrets`, { token: reader.token }), 403);
    await expectStatus(v.request("GET", "/secrets", { token: reader.token }), 403);
    const denied = (await audit("?action=auth.denied")).entries;
    expect(denied).toHaveLength(3);
    for (const e of denied) expect(e).toMatchObject({ action: "auth.denied", key: null, principal_id: reader.id });
    // Neither the global log nor the other org's log holds them.
    const global = (await expectStatus(v.asMaster("GET", "/audit?action=auth.denied"), 200)) as { entries: Entry[] };
    expect(global.entries).toEqual([]);
    const theirs = (await expectStatus(v.asMaster("GET", `/orgs/${other}/audit?action=auth.denied`), 200)) as { entries: Entry[] };
    expect(theirs.entries).toEqual([]);
  });

  it("keeps 401s and the denials of scoped keys in the global log", async () => {
    const { v, orgId, audit } = await setup();
    const scoped = (await expectStatus(v.asMaster("POST", "/keys", { name: "ci", permissions: ["admin"] }), 201)).token as string;
    await expectStatus(v.request("GET", `/orgs/${orgId}/secrets`, { token: scoped }), 403);
    await expectStatus(v.request("GET", `/orgs/${orgId}/secrets`, { token: "vpk_unknown" }), 401);
    expect((await audit("?action=auth.denied")).entries).toEqual([]);
    expect((await audit("?action=auth.failed")).entries).toEqual([]);
    const global = (await expectStatus(v.asMaster("GET", "/audit"), 200)) as { entries: { action: string }[] };
    expect(global.entries.map((e) => e.action)).toEqual(expect.arrayContaining(["auth.denied", "auth.failed"]));
  });

  it("is readable by roles with `a` (admin, owner) and the master key, not by reader or writer", async () => {
    const { v, orgId } = await setup();
    for (const role of ["admin", "owner"]) {
      const p = await createPrincipal(v, orgId, role, `an ${role}`);
      await expectStatus(v.request("GET", `/orgs/${orgId}/audit`, { token: p.token }), 200);
    }
    for (const role of ["reader", "writer"]) {
      const p = await createPrincipal(v, orgId, role, `a ${role}`);
      await expectStatus(v.request("GET", `/orgs/${orgId}/audit`, { token: p.token }), 403);
    }
    await expectStatus(v.asMaster("GET", `/orgs/${orgId}/audit`), 200);
    await expectStatus(v.asMaster("GET", "/orgs/org_aaaaaaaaaaaaaaaaaaaaaaaaaa/audit"), 404);
  });
});
