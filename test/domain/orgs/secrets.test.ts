import { describe, expect, it } from "vitest";
import { buildTestVault } from "../../support/helpers.js";
import type { TestVault } from "../../support/helpers.js";
import { createOrg, createPrincipal, expectStatus } from "../../support/org-helpers.js";
import type { TestPrincipal } from "../../support/org-helpers.js";

interface OrgFixture {
  v: TestVault;
  orgId: string;
  owner: TestPrincipal;
  reader: TestPrincipal;
  /** `/orgs/<orgId>/secrets` */
  base: string;
}

async function fixture(options: Parameters<typeof buildTestVault>[0] = {}): Promise<OrgFixture> {
  const v = buildTestVault(options);
  const orgId = await createOrg(v);
  const owner = await createPrincipal(v, orgId, "owner");
  const reader = await createPrincipal(v, orgId, "reader");
  return { v, orgId, owner, reader, base: `/orgs/${orgId}/secrets` };
}

function listOf(body: Record<string, unknown>): Record<string, unknown>[] {
  return body.secrets as Record<string, unknown>[];
}

describe("org secrets: create, list, read", () => {
  it("creates a secret owned by the calling principal and lists it without its value", async () => {
    const { v, owner, base } = await fixture();
    expect(await expectStatus(v.request("POST", base, { token: owner.token, body: { key: "db/pass", value: "hunter2" } }), 201)).toEqual({
      key: "db/pass",
    });
    const list = await expectStatus(v.request("GET", base, { token: owner.token }), 200);
    expect(list).toEqual({
      secrets: [
        {
          key: "db/pass",
          created_at: Math.floor(v.clock.now() / 1000),
          expires_at: null,
          max_reads: null,
          read_count: 0,
          owner_id: owner.id,
          state: "active",
          delete: true,
        },
      ],
    });
    expect(JSON.stringify(list)).not.toContain("hunter2");
  });

  it("gives a secret the master key creates owner_id null", async () => {
    const { v, base } = await fixture();
    await expectStatus(v.asMaster("POST", base, { key: "k", value: "v" }), 201);
    expect(listOf(await expectStatus(v.asMaster("GET", base), 200))[0]?.owner_id).toBeNull();
  });

  it("returns the value and counts the read", async () => {
    const { v, owner, reader, base } = await fixture();
    await expectStatus(v.request("POST", base, { token: owner.token, body: { key: "k", value: "v1", max_reads: 5, ttl_seconds: 600 } }), 201);
    const got = await expectStatus(v.request("GET", `${base}/k`, { token: reader.token }), 200);
    expect(got).toEqual({
      key: "k",
      value: "v1",
      created_at: Math.floor(v.clock.now() / 1000),
      expires_at: Math.floor(v.clock.now() / 1000) + 600,
      max_reads: 5,
      read_count: 1,
    });
  });

  it("refuses a duplicate of a live key in the org (409) but not in another org", async () => {
    const { v, owner, base } = await fixture();
    await expectStatus(v.request("POST", base, { token: owner.token, body: { key: "k", value: "a" } }), 201);
    await expectStatus(v.request("POST", base, { token: owner.token, body: { key: "k", value: "b" } }), 409);
    expect((await expectStatus(v.request("GET", `${base}/k`, { token: owner.token }), 200)).value).toBe("a");
    const other = await createOrg(v, "other");
    await expectStatus(v.asMaster("POST", `/orgs/${other}/secrets`, { key: "k", value: "b" }), 201);
    expect((await expectStatus(v.asMaster("GET", `/orgs/${other}/secrets/k`), 200)).value).toBe("b");
  });

  it("accepts a 64-hex key in an org (the reservation is global only)", async () => {
    const { v, owner, base } = await fixture();
    const key = "a".repeat(64);
    await expectStatus(v.request("POST", base, { token: owner.token, body: { key, value: "v" } }), 201);
    expect((await expectStatus(v.request("GET", `${base}/${key}`, { token: owner.token }), 200)).key).toBe(key);
  });

  it.each([
    ["no key", { value: "v" }],
    ["no value", { key: "k" }],
    ["an empty key", { key: "", value: "v" }],
    ["a key starting with /", { key: "/k", value: "v" }],
    ["a key with a space", { key: "a b", value: "v" }],
    ["delete that is not a boolean", { key: "k", value: "v", delete: "false" }],
    ["max_reads 0", { key: "k", value: "v", max_reads: 0 }],
    ["ttl_seconds fractional", { key: "k", value: "v", ttl_seconds: 1.5 }],
    ["allowed_keys that is not an array", { key: "k", value: "v", allowed_keys: "pk_x" }],
    ["an empty allowed_keys", { key: "k", value: "v", allowed_keys: [] }],
    ["an unknown allowed_keys id", { key: "k", value: "v", allowed_keys: ["pk_aaaaaaaaaaaaaaaaaaaaaaaaaa"] }],
  ])("answers 400 to %s and creates nothing", async (_label, body) => {
    const { v, owner, base } = await fixture();
    const res = await expectStatus(v.request("POST", base, { token: owner.token, body }), 400);
    expect(JSON.stringify(res)).not.toContain("pk_aaaa");
    expect(listOf(await expectStatus(v.asMaster("GET", base), 200))).toEqual([]);
  });

  it("answers 413 to a value over VAULT_MAX_VALUE_BYTES", async () => {
    const { v, owner, base } = await fixture({ maxValueBytes: 10 });
    await expectStatus(v.request("POST", base, { token: owner.token, body: { key: "k", value: "x".repeat(11) } }), 413);
    await expectStatus(v.request("POST", base, { token: owner.token, body: { key: "k", value: "x".repeat(10) } }), 201);
  });

  it("answers 413 to a body over 1 MiB, but only after authorization: 403 comes first", async () => {
    const { v, orgId, owner, reader, base } = await fixture();
    const other = await createOrg(v, "other");
    const huge = JSON.stringify({ key: "k", value: "x".repeat(1024 * 1024 + 1) });
    const send = (path: string, token: string, headers: Record<string, string> = {}) =>
      v.request("POST", path, { token, raw: huge, contentType: "application/json", headers });
    const sized: Record<string, string> = { "content-length": String(Buffer.byteLength(huge)) };
    for (const headers of [{}, sized]) {
      await expectStatus(send(base, reader.token, headers), 403); // no `c`
      await expectStatus(send(`/orgs/${other}/secrets`, owner.token, headers), 403); // another org
      await expectStatus(send("/orgs", owner.token, headers), 403); // master key only
      await expectStatus(send(base, owner.token, headers), 413);
      await expectStatus(send(`/orgs/${orgId}/webhooks`, owner.token, headers), 413);
    }
    expect(listOf(await expectStatus(v.asMaster("GET", base), 200))).toEqual([]);
  });

  it("shares the free-tier limit with global secrets (402)", async () => {
    const { v, owner, base } = await fixture({ activeLimit: () => 2 });
    await expectStatus(v.asMaster("POST", "/secrets", { key: "g", value: "v" }), 201);
    await expectStatus(v.request("POST", base, { token: owner.token, body: { key: "a", value: "v" } }), 201);
    const res = await expectStatus(v.request("POST", base, { token: owner.token, body: { key: "b", value: "v" } }), 402);
    expect(res.error).toBe("free tier limit reached");
    await expectStatus(v.asMaster("POST", "/secrets", { key: "g2", value: "v" }), 402);
  });

  it("hides secrets past their TTL, answers 404, and prunes their tombstones", async () => {
    const { v, owner, base, orgId } = await fixture();
    await expectStatus(v.request("POST", base, { token: owner.token, body: { key: "k", value: "v", ttl_seconds: 30 } }), 201);
    v.clock.advance(30_000);
    expect(listOf(await expectStatus(v.request("GET", base, { token: owner.token }), 200))).toEqual([]);
    await expectStatus(v.request("GET", `${base}/k`, { token: owner.token }), 404);
    expect(await expectStatus(v.request("POST", `/orgs/${orgId}/prune`, { token: owner.token }), 200)).toEqual({ pruned: 1 });
    expect(await expectStatus(v.request("POST", `/orgs/${orgId}/prune`, { token: owner.token }), 200)).toEqual({ pruned: 0 });
  });

  it("pages the list with limit and cursor", async () => {
    const { v, owner, base } = await fixture();
    for (const key of ["a", "b", "c"]) await expectStatus(v.request("POST", base, { token: owner.token, body: { key, value: "v" } }), 201);
    const first = await expectStatus(v.request("GET", `${base}?limit=2`, { token: owner.token }), 200);
    expect(listOf(first).map((s) => s.key)).toEqual(["a", "b"]);
    const rest = await expectStatus(v.request("GET", `${base}?cursor=${first.next_cursor as string}`, { token: owner.token }), 200);
    expect(listOf(rest).map((s) => s.key)).toEqual(["c"]);
  });
});

describe("org secrets: burn and seal", () => {
  it("burns a delete=true secret on the read that reaches max_reads", async () => {
    const { v, owner, base } = await fixture();
    await expectStatus(v.request("POST", base, { token: owner.token, body: { key: "k", value: "v", max_reads: 2 } }), 201);
    await expectStatus(v.request("GET", `${base}/k`, { token: owner.token }), 200);
    expect((await expectStatus(v.request("GET", `${base}/k`, { token: owner.token }), 200)).value).toBe("v");
    await expectStatus(v.request("GET", `${base}/k`, { token: owner.token }), 404);
    expect(listOf(await expectStatus(v.request("GET", base, { token: owner.token }), 200))).toEqual([]);
    await expectStatus(v.request("POST", base, { token: owner.token, body: { key: "k", value: "again" } }), 201);
  });

  it("seals a delete=false secret instead: 410 on GET and HEAD, listed as sealed, value destroyed from reads", async () => {
    const { v, owner, base } = await fixture();
    await expectStatus(v.request("POST", base, { token: owner.token, body: { key: "k", value: "v", max_reads: 1, delete: false } }), 201);
    expect((await expectStatus(v.request("GET", `${base}/k`, { token: owner.token }), 200)).value).toBe("v");
    const sealed = await expectStatus(v.request("GET", `${base}/k`, { token: owner.token }), 410);
    expect(sealed.error).toBe("secret sealed");
    expect(JSON.stringify(sealed)).not.toContain('"v"');
    expect((await v.request("HEAD", `${base}/k`, { token: owner.token })).status).toBe(410);
    expect(listOf(await expectStatus(v.request("GET", base, { token: owner.token }), 200))[0]).toMatchObject({
      key: "k",
      state: "sealed",
      read_count: 1,
      max_reads: 1,
      delete: false,
    });
    await expectStatus(v.request("POST", base, { token: owner.token, body: { key: "k", value: "w" } }), 409);
  });

  it("reactivates a sealed secret with PATCH max_reads (read_count back to 0)", async () => {
    const { v, owner, base } = await fixture();
    await expectStatus(v.request("POST", base, { token: owner.token, body: { key: "k", value: "v", max_reads: 1, delete: false } }), 201);
    await expectStatus(v.request("GET", `${base}/k`, { token: owner.token }), 200);
    expect(await expectStatus(v.request("PATCH", `${base}/k`, { token: owner.token, body: { max_reads: 2 } }), 200)).toEqual({
      key: "k",
      updated: true,
    });
    expect(listOf(await expectStatus(v.request("GET", base, { token: owner.token }), 200))[0]).toMatchObject({ state: "active", read_count: 0 });
    expect(await expectStatus(v.request("GET", `${base}/k`, { token: owner.token }), 200)).toMatchObject({ value: "v", read_count: 1 });
  });

  it("keeps a sealed secret sealed when PATCH gives only ttl_seconds", async () => {
    const { v, owner, base } = await fixture();
    await expectStatus(v.request("POST", base, { token: owner.token, body: { key: "k", value: "v", max_reads: 1, delete: false } }), 201);
    await expectStatus(v.request("GET", `${base}/k`, { token: owner.token }), 200);
    await expectStatus(v.request("PATCH", `${base}/k`, { token: owner.token, body: { ttl_seconds: 60 } }), 200);
    await expectStatus(v.request("GET", `${base}/k`, { token: owner.token }), 410);
    v.clock.advance(60_000);
    await expectStatus(v.request("GET", `${base}/k`, { token: owner.token }), 404);
  });

  it("refuses PATCH on a secret created with delete=true (409), with nothing to change (400), or a missing one (404)", async () => {
    const { v, owner, base } = await fixture();
    await expectStatus(v.request("POST", base, { token: owner.token, body: { key: "burns", value: "v", max_reads: 3 } }), 201);
    await expectStatus(v.request("POST", base, { token: owner.token, body: { key: "seals", value: "v", delete: false } }), 201);
    await expectStatus(v.request("PATCH", `${base}/burns`, { token: owner.token, body: { max_reads: 9 } }), 409);
    await expectStatus(v.request("PATCH", `${base}/seals`, { token: owner.token, body: {} }), 400);
    await expectStatus(v.request("PATCH", `${base}/nope`, { token: owner.token, body: { max_reads: 9 } }), 404);
    expect(listOf(await expectStatus(v.request("GET", base, { token: owner.token }), 200))[0]).toMatchObject({ key: "burns", max_reads: 3 });
  });

  it("deletes an active or a sealed secret", async () => {
    const { v, owner, base } = await fixture();
    await expectStatus(v.request("POST", base, { token: owner.token, body: { key: "k", value: "v", max_reads: 1, delete: false } }), 201);
    await expectStatus(v.request("GET", `${base}/k`, { token: owner.token }), 200);
    expect(await expectStatus(v.request("DELETE", `${base}/k`, { token: owner.token }), 200)).toEqual({ deleted: true });
    await expectStatus(v.request("GET", `${base}/k`, { token: owner.token }), 404);
    await expectStatus(v.request("DELETE", `${base}/k`, { token: owner.token }), 404);
  });
});

describe("org secrets: HEAD", () => {
  it("answers 200 without a body, without decrypting and without counting a read", async () => {
    const { v, owner, base } = await fixture();
    await expectStatus(v.request("POST", base, { token: owner.token, body: { key: "k", value: "v", max_reads: 1 } }), 201);
    for (let i = 0; i < 3; i++) {
      const res = await v.request("HEAD", `${base}/k`, { token: owner.token });
      expect(res.status).toBe(200);
      expect(await res.text()).toBe("");
    }
    expect(listOf(await expectStatus(v.request("GET", base, { token: owner.token }), 200))[0]?.read_count).toBe(0);
    expect((await expectStatus(v.request("GET", `${base}/k`, { token: owner.token }), 200)).value).toBe("v");
  });

  it("answers 404 for a missing secret", async () => {
    const { v, owner, base } = await fixture();
    expect((await v.request("HEAD", `${base}/nope`, { token: owner.token })).status).toBe(404);
  });
});

describe("org secrets: allowed_keys", () => {
  it("lets only the listed keys and the master key read; others get 403 on GET and HEAD", async () => {
    const { v, owner, reader, base, orgId } = await fixture();
    const other = await createPrincipal(v, orgId, "reader", "other reader");
    await expectStatus(
      v.request("POST", base, { token: owner.token, body: { key: "k", value: "v", allowed_keys: [reader.keyId] } }),
      201,
    );
    await expectStatus(v.request("GET", `${base}/k`, { token: owner.token }), 403);
    await expectStatus(v.request("GET", `${base}/k`, { token: other.token }), 403);
    expect((await v.request("HEAD", `${base}/k`, { token: other.token })).status).toBe(403);
    expect((await v.request("HEAD", `${base}/k`, { token: reader.token })).status).toBe(200);
    expect((await expectStatus(v.request("GET", `${base}/k`, { token: reader.token }), 200)).value).toBe("v");
    expect((await expectStatus(v.asMaster("GET", `${base}/k`), 200)).read_count).toBe(2);
  });

  it("counts no read for a refused reader", async () => {
    const { v, owner, reader, base } = await fixture();
    await expectStatus(v.request("POST", base, { token: owner.token, body: { key: "k", value: "v", max_reads: 1, allowed_keys: [reader.keyId] } }), 201);
    await expectStatus(v.request("GET", `${base}/k`, { token: owner.token }), 403);
    await expectStatus(v.request("GET", `${base}/k`, { token: reader.token }), 200);
  });

  it("refuses a principal key id of another org (400)", async () => {
    const { v, owner, base } = await fixture();
    const otherOrg = await createOrg(v, "other");
    const stranger = await createPrincipal(v, otherOrg, "owner");
    await expectStatus(v.request("POST", base, { token: owner.token, body: { key: "k", value: "v", allowed_keys: [stranger.keyId] } }), 400);
    expect(listOf(await expectStatus(v.asMaster("GET", base), 200))).toEqual([]);
  });
});

describe("org isolation", () => {
  it("gives a principal key 403 on another org's path, whether or not that org exists", async () => {
    const { v, owner } = await fixture();
    const otherOrg = await createOrg(v, "other");
    await expectStatus(v.asMaster("POST", `/orgs/${otherOrg}/secrets`, { key: "k", value: "theirs" }), 201);
    await expectStatus(v.request("GET", `/orgs/${otherOrg}/secrets/k`, { token: owner.token }), 403);
    await expectStatus(v.request("GET", "/orgs/org_aaaaaaaaaaaaaaaaaaaaaaaaaa/secrets/k", { token: owner.token }), 403);
    await expectStatus(v.request("GET", "/orgs/org_aaaaaaaaaaaaaaaaaaaaaaaaaa/secrets/k"), 404);
  });

  it("refuses every method on another org's secrets (IDOR) and changes nothing there", async () => {
    const { v } = await fixture();
    const victim = await createOrg(v, "victim");
    const vbase = `/orgs/${victim}/secrets`;
    await expectStatus(v.asMaster("POST", vbase, { key: "k", value: "theirs", max_reads: 5, delete: false }), 201);
    const attackerOrg = await createOrg(v, "attacker");
    const attacker = await createPrincipal(v, attackerOrg, "owner");
    const t = { token: attacker.token };
    await expectStatus(v.request("GET", vbase, t), 403);
    await expectStatus(v.request("POST", vbase, { ...t, body: { key: "planted", value: "x" } }), 403);
    await expectStatus(v.request("GET", `${vbase}/k`, t), 403);
    expect((await v.request("HEAD", `${vbase}/k`, t)).status).toBe(403);
    await expectStatus(v.request("PATCH", `${vbase}/k`, { ...t, body: { max_reads: 1 } }), 403);
    await expectStatus(v.request("DELETE", `${vbase}/k`, t), 403);
    await expectStatus(v.request("POST", `/orgs/${victim}/prune`, t), 403);
    await expectStatus(v.request("GET", `/orgs/${victim}/audit`, t), 403);
    await expectStatus(v.request("GET", `/orgs/${victim}`, t), 403);
    await expectStatus(v.request("GET", `/orgs/${victim}/principals`, t), 403);
    const list = listOf(await expectStatus(v.asMaster("GET", vbase), 200));
    expect(list).toEqual([expect.objectContaining({ key: "k", read_count: 0, max_reads: 5 })]);
  });

  it("keeps same-named secrets of two orgs apart", async () => {
    const v = buildTestVault();
    const a = await createOrg(v, "a");
    const b = await createOrg(v, "b");
    const pa = await createPrincipal(v, a, "owner");
    const pb = await createPrincipal(v, b, "owner");
    await expectStatus(v.request("POST", `/orgs/${a}/secrets`, { token: pa.token, body: { key: "k", value: "from a" } }), 201);
    await expectStatus(v.request("POST", `/orgs/${b}/secrets`, { token: pb.token, body: { key: "k", value: "from b" } }), 201);
    expect((await expectStatus(v.request("GET", `/orgs/${a}/secrets/k`, { token: pa.token }), 200)).value).toBe("from a");
    expect((await expectStatus(v.request("GET", `/orgs/${b}/secrets/k`, { token: pb.token }), 200)).value).toBe("from b");
    await expectStatus(v.request("DELETE", `/orgs/${a}/secrets/k`, { token: pa.token }), 200);
    expect((await expectStatus(v.request("GET", `/orgs/${b}/secrets/k`, { token: pb.token }), 200)).value).toBe("from b");
  });

  it("keeps org secrets out of the global namespace and global secrets out of the org's", async () => {
    const { v, owner, base } = await fixture();
    await expectStatus(v.request("POST", base, { token: owner.token, body: { key: "shared", value: "org" } }), 201);
    await expectStatus(v.asMaster("GET", "/secrets/shared"), 404);
    await expectStatus(v.asMaster("POST", "/secrets", { key: "global-only", value: "g" }), 201);
    await expectStatus(v.request("GET", `${base}/global-only`, { token: owner.token }), 404);
  });

  it("gives principal keys 403 on global routes", async () => {
    const { v, owner } = await fixture();
    await expectStatus(v.asMaster("POST", "/secrets", { key: "g", value: "v" }), 201);
    await expectStatus(v.request("GET", "/secrets/g", { token: owner.token }), 403);
    await expectStatus(v.request("GET", "/secrets", { token: owner.token }), 403);
    await expectStatus(v.request("POST", "/secrets", { token: owner.token, body: { key: "x", value: "v" } }), 403);
    await expectStatus(v.request("DELETE", "/secrets/g", { token: owner.token }), 403);
    await expectStatus(v.request("POST", "/prune", { token: owner.token }), 403);
    await expectStatus(v.asMaster("GET", "/secrets/g"), 200);
  });
});

describe("path traversal in org ids and keys", () => {
  it("treats an encoded slash or dot-dot in the org id as another (unknown) org", async () => {
    const { v, owner, orgId } = await fixture();
    const victim = await createOrg(v, "victim");
    await expectStatus(v.asMaster("POST", `/orgs/${victim}/secrets`, { key: "k", value: "theirs" }), 201);
    for (const org of [`${orgId}%2F..%2F${victim}`, `${orgId}%2f..%2f${victim}`, `..%2F${victim}`, `${orgId}%2F`]) {
      await expectStatus(v.request("GET", `/orgs/${org}/secrets/k`, { token: owner.token }), 403);
      await expectStatus(v.request("GET", `/orgs/${org}/secrets/k`), 404);
    }
  });

  it("resolves dot-dot segments before routing, never into another org", async () => {
    const { v, owner, orgId } = await fixture();
    const victim = await createOrg(v, "victim");
    await expectStatus(v.asMaster("POST", `/orgs/${victim}/secrets`, { key: "k", value: "theirs" }), 201);
    for (const path of [
      `/orgs/${orgId}/secrets/../../${victim}/secrets/k`,
      `/orgs/${orgId}/secrets/%2e%2e/%2e%2e/${victim}/secrets/k`,
      `/orgs/${orgId}/secrets/%2E%2E/%2E%2E/${victim}/secrets/k`,
    ]) {
      const res = await v.request("GET", path, { token: owner.token });
      expect(res.status).toBe(403);
      expect(await res.text()).not.toContain("theirs");
    }
  });

  it("takes an encoded slash in a key as part of the key, inside the caller's org; a .. segment is refused (400)", async () => {
    const { v, owner, orgId } = await fixture();
    const victim = await createOrg(v, "victim");
    await expectStatus(v.asMaster("POST", `/orgs/${victim}/secrets`, { key: "k", value: "theirs" }), 201);
    const sneaky = `..%2F..%2F${victim}%2Fsecrets%2Fk`;
    await expectStatus(v.request("GET", `/orgs/${orgId}/secrets/${sneaky}`, { token: owner.token }), 400);
    await expectStatus(v.request("POST", `/orgs/${orgId}/secrets`, { token: owner.token, body: { key: "a/b", value: "mine" } }), 201);
    expect((await expectStatus(v.request("GET", `/orgs/${orgId}/secrets/a%2Fb`, { token: owner.token }), 200)).value).toBe("mine");
    expect((await expectStatus(v.asMaster("GET", `/orgs/${victim}/secrets/k`), 200)).read_count).toBe(1);
  });
});

describe("concurrent reads", () => {
  it("gives exactly max_reads 200s to parallel readers of a sealing secret, then 410", async () => {
    const { v, owner, reader, base } = await fixture();
    await expectStatus(v.request("POST", base, { token: owner.token, body: { key: "k", value: "v", max_reads: 3, delete: false } }), 201);
    const results = await Promise.all(Array.from({ length: 20 }, () => v.request("GET", `${base}/k`, { token: reader.token })));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(3);
    expect(statuses.filter((s) => s === 410)).toHaveLength(17);
    await expectStatus(v.request("GET", `${base}/k`, { token: reader.token }), 410);
  });

  it("gives exactly max_reads 200s to parallel readers of a burning secret, then 404", async () => {
    const { v, owner, reader, base } = await fixture();
    await expectStatus(v.request("POST", base, { token: owner.token, body: { key: "k", value: "v", max_reads: 4 } }), 201);
    const results = await Promise.all(Array.from({ length: 20 }, () => v.request("GET", `${base}/k`, { token: reader.token })));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(4);
    expect(statuses.filter((s) => s === 404)).toHaveLength(16);
  });
});
