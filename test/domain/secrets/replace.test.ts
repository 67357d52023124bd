import { describe, expect, it } from "vitest";
import { SYSTEM_ORIGIN } from "../../../src/domain/events.js";
import { buildTestVault, createKey } from "../../support/helpers.js";
import type { TestVault } from "../../support/helpers.js";
import { createOrg, createPrincipal, createRole, expectStatus } from "../../support/org-helpers.js";

// PUT /secrets/:key and PUT /orgs/:org_id/secrets/:key (docs/api.md "Replace a secret").

/** The stored row of a key: created_at, updated_at and read_count, on either engine. */
async function row(v: TestVault, scope: string, key: string): Promise<Record<string, unknown>> {
  const rows = await v.query("SELECT created_at, updated_at, read_count, state FROM secrets WHERE scope = ? AND key = ?", scope, key);
  expect(rows).toHaveLength(1);
  return rows[0] as Record<string, unknown>;
}

/** Audit actions, oldest first. */
async function auditActions(v: TestVault, path = "/audit"): Promise<string[]> {
  const body = await expectStatus(v.asMaster("GET", path), 200);
  return (body.entries as { action: string }[]).map((e) => e.action).reverse();
}

/** Types of the webhook events queued, oldest first. */
async function eventTypes(v: TestVault): Promise<string[]> {
  const rows = await v.query("SELECT type, body FROM webhook_events ORDER BY created_at, id");
  for (const r of rows) expect(String(r.body)).not.toContain("NEW-VALUE");
  return rows.map((r) => r.type as string);
}

describe("PUT /secrets/:key", () => {
  it("creates a missing secret (201 {key}), then replaces it (200 {key, updated: true})", async () => {
    const v = buildTestVault();
    expect(await expectStatus(v.asMaster("PUT", "/secrets/app/db", { value: "first", max_reads: 5 }), 201)).toEqual({ key: "app/db" });
    const created = await row(v, "global", "app/db");
    await expectStatus(v.asMaster("GET", "/secrets/app/db"), 200);
    expect((await row(v, "global", "app/db")).read_count).toBe(1);
    v.clock.advance(5_000);
    expect(await expectStatus(v.asMaster("PUT", "/secrets/app/db", { value: "second", ttl_seconds: 60, max_reads: 3 }), 200)).toEqual({
      key: "app/db",
      updated: true,
    });
    const replaced = await row(v, "global", "app/db");
    expect(replaced.read_count).toBe(0);
    expect(replaced.created_at).toBe(created.created_at);
    expect(replaced.updated_at).toBe(v.clock.now());
    const read = await expectStatus(v.asMaster("GET", "/secrets/app/db"), 200);
    expect(read).toMatchObject({ key: "app/db", value: "second", max_reads: 3, read_count: 1 });
    expect(read.created_at).toBe(Math.floor((created.created_at as number) / 1000));
    expect(read.expires_at).toBe(Math.floor(v.clock.now() / 1000) + 60);
  });

  it("replaces limits as a whole: an omitted ttl_seconds or max_reads is no TTL, no limit", async () => {
    const v = buildTestVault();
    await expectStatus(v.asMaster("POST", "/secrets", { key: "k", value: "a", ttl_seconds: 10, max_reads: 1 }), 201);
    await expectStatus(v.asMaster("PUT", "/secrets/k", { value: "b" }), 200);
    const read = await expectStatus(v.asMaster("GET", "/secrets/k"), 200);
    expect(read).toMatchObject({ value: "b", expires_at: null, max_reads: null, read_count: 1 });
  });

  it("creates again under a key whose secret expired (201), the expiry recorded first", async () => {
    const v = buildTestVault();
    await expectStatus(v.asMaster("POST", "/secrets", { key: "k", value: "a", ttl_seconds: 1 }), 201);
    v.clock.advance(1_000);
    await expectStatus(v.asMaster("PUT", "/secrets/k", { value: "b" }), 201);
    expect((await auditActions(v)).filter((a) => a.startsWith("secret."))).toEqual(["secret.created", "secret.expired", "secret.created"]);
    expect(await expectStatus(v.asMaster("GET", "/secrets/k"), 200)).toMatchObject({ value: "b" });
  });

  it("records secret.updated in the audit log and as a webhook event, never the value", async () => {
    const v = buildTestVault();
    await v.tx.run((w) =>
      v.webhooks.registry.create(w, { orgId: null, url: "https://hooks.example/in", events: ["*"], description: null, keyPrefix: null }, SYSTEM_ORIGIN),
    );
    await expectStatus(v.asMaster("PUT", "/secrets/k", { value: "old" }), 201);
    v.clock.advance(1_000); // events of one millisecond have no order among them
    await expectStatus(v.asMaster("PUT", "/secrets/k", { value: "NEW-VALUE" }), 200);
    expect((await auditActions(v)).filter((a) => a.startsWith("secret."))).toEqual(["secret.created", "secret.updated"]);
    expect(await eventTypes(v)).toEqual(["secret.created", "secret.updated"]);
    const audit = JSON.stringify(await v.query("SELECT * FROM audit"));
    expect(audit).not.toContain("NEW-VALUE");
  });

  it("answers 404 for a public id, which cannot be replaced, and changes nothing", async () => {
    const v = buildTestVault();
    const pub = await expectStatus(v.asMaster("POST", "/secrets", { value: "dead drop" }), 201);
    await expectStatus(v.asMaster("PUT", `/secrets/${pub.id as string}`, { value: "other" }), 404);
    await expectStatus(v.asMaster("PUT", `/secrets/${"a".repeat(64)}`, { value: "other" }), 404);
    expect(await expectStatus(v.asMaster("GET", `/secrets/${pub.id as string}`), 200)).toMatchObject({ value: "dead drop" });
  });

  it("answers 400 to bad bodies and keys, changing nothing", async () => {
    const v = buildTestVault();
    await expectStatus(v.asMaster("PUT", "/secrets/k", { value: "keep" }), 201);
    for (const body of [{}, { value: "" }, { value: 5 }, { value: "x", ttl_seconds: 0 }, { value: "x", max_reads: 1.5 }, { value: "x", max_reads: "2" }]) {
      await expectStatus(v.asMaster("PUT", "/secrets/k", body), 400);
    }
    await expectStatus(v.request("PUT", "/secrets/k", { raw: "{not json", contentType: "application/json" }), 400);
    await expectStatus(v.asMaster("PUT", "/secrets/a/../b/", { value: "x" }), 400);
    await expectStatus(v.asMaster("PUT", "/secrets/a%2F%2Fb", { value: "x" }), 400);
    expect(await expectStatus(v.asMaster("GET", "/secrets/k"), 200)).toMatchObject({ value: "keep", read_count: 1 });
  });

  it("applies the free-tier limit to a create (402) but not to a replace", async () => {
    const v = buildTestVault({ activeLimit: () => 1 });
    await expectStatus(v.asMaster("PUT", "/secrets/one", { value: "a" }), 201);
    await expectStatus(v.asMaster("PUT", "/secrets/two", { value: "b" }), 402);
    await expectStatus(v.asMaster("PUT", "/secrets/one", { value: "c" }), 200);
  });

  it("needs write (or admin) within the key's prefix: 403 before 400", async () => {
    const v = buildTestVault();
    await expectStatus(v.asMaster("PUT", "/secrets/ci/token", { value: "a" }), 201);
    const reader = await createKey(v, { permissions: ["read"] });
    const writer = await createKey(v, { permissions: ["write"], prefix: "ci/" });
    const admin = await createKey(v, { permissions: ["admin"] });
    await expectStatus(v.request("PUT", "/secrets/ci/token", { token: reader.token, body: { value: "x" } }), 403);
    await expectStatus(v.request("PUT", "/secrets/ci/token", { token: reader.token, body: {} }), 403);
    await expectStatus(v.request("PUT", "/secrets/prod/token", { token: writer.token, body: { value: "x" } }), 403);
    await expectStatus(v.request("PUT", "/secrets/prod/token", { token: writer.token, body: {} }), 403);
    await expectStatus(v.request("PUT", `/secrets/${"b".repeat(64)}`, { token: writer.token, body: { value: "x" } }), 403);
    await expectStatus(v.request("PUT", "/secrets/ci/token", { token: writer.token, body: { value: "b" } }), 200);
    await expectStatus(v.request("PUT", "/secrets/ci/new", { token: writer.token, body: { value: "n" } }), 201);
    await expectStatus(v.request("PUT", "/secrets/ci/token", { token: admin.token, body: { value: "c" } }), 200);
    await expectStatus(v.request("PUT", "/secrets/ci/token", { token: null, body: { value: "x" } }), 401);
    expect(await expectStatus(v.asMaster("GET", "/secrets/ci/token"), 200)).toMatchObject({ value: "c" });
  });

  it("never answers 404 to a reader while the secret is replaced again and again", async () => {
    const v = buildTestVault();
    await expectStatus(v.asMaster("PUT", "/secrets/hot", { value: "v0" }), 201);
    const values = new Set(["v0"]);
    const statuses: number[] = [];
    const seen: string[] = [];
    let writing = true;
    const writer = (async () => {
      for (let i = 1; i <= 30; i++) {
        values.add(`v${i}`);
        await expectStatus(v.asMaster("PUT", "/secrets/hot", { value: `v${i}`, max_reads: 1_000 }), 200);
      }
      writing = false;
    })();
    const reader = async () => {
      while (writing) {
        const res = await v.asMaster("GET", "/secrets/hot");
        statuses.push(res.status);
        if (res.status === 200) seen.push(((await res.json()) as { value: string }).value);
        else await res.text();
      }
    };
    await Promise.all([writer, ...Array.from({ length: 6 }, reader)]);
    expect(statuses.length).toBeGreaterThan(0);
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    for (const value of seen) expect(values.has(value)).toBe(true);
    expect(await expectStatus(v.asMaster("GET", "/secrets/hot"), 200)).toMatchObject({ value: "v30" });
  });

  it("answers concurrent creates of one missing key 201 once and 200 otherwise", async () => {
    const v = buildTestVault();
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => v.asMaster("PUT", "/secrets/race", { value: `r${i}` })));
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 200, 200, 200, 200, 201]);
  });
});

describe("PUT /orgs/:org_id/secrets/:key", () => {
  it("creates, then replaces with read_count 0 and created_at kept, as a writer", async () => {
    const v = buildTestVault();
    const org = await createOrg(v);
    const writer = await createPrincipal(v, org, "writer");
    const base = `/orgs/${org}/secrets`;
    expect(await expectStatus(v.request("PUT", `${base}/k`, { token: writer.token, body: { value: "a", max_reads: 3, delete: false } }), 201)).toEqual({
      key: "k",
    });
    const created = await row(v, org, "k");
    await expectStatus(v.request("GET", `${base}/k`, { token: writer.token }), 200);
    v.clock.advance(2_000);
    expect(await expectStatus(v.request("PUT", `${base}/k`, { token: writer.token, body: { value: "b", max_reads: 2 } }), 200)).toEqual({
      key: "k",
      updated: true,
    });
    const replaced = await row(v, org, "k");
    expect(replaced.read_count).toBe(0);
    expect(replaced.created_at).toBe(created.created_at);
    expect(await expectStatus(v.request("GET", `${base}/k`, { token: writer.token }), 200)).toMatchObject({ value: "b", read_count: 1, max_reads: 2 });
    expect((await auditActions(v, `/orgs/${org}/audit`)).filter((a) => a.startsWith("secret."))).toEqual([
      "secret.created",
      "secret.read",
      "secret.updated",
      "secret.read",
    ]);
  });

  it("makes a sealed secret active again", async () => {
    const v = buildTestVault();
    const org = await createOrg(v);
    const base = `/orgs/${org}/secrets`;
    await expectStatus(v.asMaster("POST", base, { key: "k", value: "a", max_reads: 1, delete: false }), 201);
    await expectStatus(v.asMaster("GET", `${base}/k`), 200);
    await expectStatus(v.asMaster("GET", `${base}/k`), 410);
    await expectStatus(v.asMaster("PUT", `${base}/k`, { value: "b", max_reads: 1, delete: false }), 200);
    expect((await row(v, org, "k")).state).toBe("active");
    expect(await expectStatus(v.asMaster("GET", `${base}/k`), 200)).toMatchObject({ value: "b", read_count: 1 });
    await expectStatus(v.asMaster("GET", `${base}/k`), 410);
  });

  it("replaces a secret created with delete: true (which PATCH refuses)", async () => {
    const v = buildTestVault();
    const org = await createOrg(v);
    const base = `/orgs/${org}/secrets`;
    await expectStatus(v.asMaster("POST", base, { key: "k", value: "a", max_reads: 2 }), 201);
    await expectStatus(v.asMaster("PATCH", `${base}/k`, { max_reads: 5 }), 409);
    await expectStatus(v.asMaster("PUT", `${base}/k`, { value: "b", max_reads: 1 }), 200);
    expect(await expectStatus(v.asMaster("GET", `${base}/k`), 200)).toMatchObject({ value: "b" });
    await expectStatus(v.asMaster("GET", `${base}/k`), 404);
  });

  it("sets allowed_keys on a replace (unknown id: 400)", async () => {
    const v = buildTestVault();
    const org = await createOrg(v);
    const a = await createPrincipal(v, org, "reader", "a");
    const b = await createPrincipal(v, org, "reader", "b");
    const base = `/orgs/${org}/secrets`;
    await expectStatus(v.asMaster("PUT", `${base}/k`, { value: "x" }), 201);
    await expectStatus(v.asMaster("PUT", `${base}/k`, { value: "y", allowed_keys: ["pk_aaaaaaaaaaaaaaaaaaaaaaaaaa"] }), 400);
    await expectStatus(v.asMaster("PUT", `${base}/k`, { value: "y", allowed_keys: [a.keyId] }), 200);
    await expectStatus(v.request("GET", `${base}/k`, { token: b.token }), 403);
    expect(await expectStatus(v.request("GET", `${base}/k`, { token: a.token }), 200)).toMatchObject({ value: "y" });
  });

  it("needs the create letter (c): a reader gets 403, a role with c may", async () => {
    const v = buildTestVault();
    const org = await createOrg(v);
    const base = `/orgs/${org}/secrets`;
    await expectStatus(v.asMaster("PUT", `${base}/k`, { value: "x" }), 201);
    const reader = await createPrincipal(v, org, "reader");
    await createRole(v, org, "patcher", "rP");
    await createRole(v, org, "creator", "c");
    const patcher = await createPrincipal(v, org, "patcher");
    const creator = await createPrincipal(v, org, "creator");
    await expectStatus(v.request("PUT", `${base}/k`, { token: reader.token, body: { value: "y" } }), 403);
    await expectStatus(v.request("PUT", `${base}/k`, { token: reader.token, body: {} }), 403);
    await expectStatus(v.request("PUT", `${base}/k`, { token: patcher.token, body: { value: "y" } }), 403);
    await expectStatus(v.request("PUT", `${base}/k`, { token: creator.token, body: { value: "z" } }), 200);
    const other = await createOrg(v, "other");
    const outsider = await createPrincipal(v, other, "owner");
    await expectStatus(v.request("PUT", `${base}/k`, { token: outsider.token, body: { value: "w" } }), 403);
    const scoped = await createKey(v, { permissions: ["admin"] });
    await expectStatus(v.request("PUT", `${base}/k`, { token: scoped.token, body: { value: "w" } }), 403);
    expect(await expectStatus(v.asMaster("GET", `${base}/k`), 200)).toMatchObject({ value: "z" });
  });

  it("answers 400 to bad bodies and 404 for an unknown org", async () => {
    const v = buildTestVault();
    const org = await createOrg(v);
    const base = `/orgs/${org}/secrets`;
    for (const body of [{}, { value: "x", delete: "no" }, { value: "x", allowed_keys: [] }, { value: "x", max_reads: 0 }]) {
      await expectStatus(v.asMaster("PUT", `${base}/k`, body), 400);
    }
    await expectStatus(v.asMaster("PUT", "/orgs/org_unknown/secrets/k", { value: "x" }), 404);
  });
});
