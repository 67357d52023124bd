import { describe, expect, it } from "vitest";
import type { TestVault } from "../support/helpers.js";
import { createOrg, createPrincipal, createRole, expectStatus } from "../support/org-helpers.js";
import { useWebhookFixtures, START_SECONDS, vaultWith, createWebhook, countRows, queuedRows } from "../support/webhook-helpers.js";

useWebhookFixtures();

/** A create answer as lists show it: without the signing secret. */
function shown(created: Record<string, unknown>): Record<string, unknown> {
  const { secret: _secret, ...rest } = created;
  return rest;
}

describe("global webhook routes", () => {
  it("creates, lists and deletes webhooks with the documented shapes", async () => {
    const v = vaultWith();
    const created = await createWebhook(v, { url: "https://127.0.0.1:9/hook", events: ["secret.read", "secret.burned"] });
    expect(created).toEqual({
      id: expect.stringMatching(/^wh_[a-z2-7]{26}$/),
      url: "https://127.0.0.1:9/hook",
      events: ["secret.read", "secret.burned"],
      description: null,
      created_at: START_SECONDS,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    const second = await createWebhook(v, { url: "https://127.0.0.1:9/all", events: ["*"], description: "  audit sink  " });
    expect(second.description).toBe("audit sink");

    // Lists show the webhook without its signing secret.
    const list = await expectStatus(v.asMaster("GET", "/webhooks"), 200);
    expect(list).toEqual({ webhooks: [shown(created), shown(second)] });

    const page = await expectStatus(v.asMaster("GET", "/webhooks?limit=1"), 200);
    expect(page.webhooks).toEqual([shown(created)]);
    const rest = await expectStatus(v.asMaster("GET", `/webhooks?limit=1&cursor=${page.next_cursor as string}`), 200);
    expect(rest).toEqual({ webhooks: [shown(second)] });

    expect(await expectStatus(v.asMaster("DELETE", `/webhooks/${created.id as string}`), 200)).toEqual({ deleted: true });
    await expectStatus(v.asMaster("DELETE", `/webhooks/${created.id as string}`), 404);
    await expectStatus(v.asMaster("DELETE", "/webhooks/wh_nope"), 404);
    await expectStatus(v.asMaster("GET", `/webhooks/${created.id as string}/deliveries`), 404);
    expect(await expectStatus(v.asMaster("GET", "/webhooks"), 200)).toEqual({ webhooks: [shown(second)] });
  });

  it("removes repeated event types and validates events and description", async () => {
    const v = vaultWith();
    const created = await createWebhook(v, { url: "https://127.0.0.1/", events: ["secret.read", "secret.read"] });
    expect(created.events).toEqual(["secret.read"]);
    const bad: unknown[] = [
      { url: "https://127.0.0.1/", events: [] },
      { url: "https://127.0.0.1/", events: ["secret.exploded"] },
      { url: "https://127.0.0.1/", events: ["*", "secret.read"] },
      { url: "https://127.0.0.1/", events: "*" },
      { url: "https://127.0.0.1/", events: [1] },
      { url: "https://127.0.0.1/" },
      { events: ["*"] },
      { url: "", events: ["*"] },
      { url: 42, events: ["*"] },
      { url: "https://127.0.0.1/", events: ["*"], description: "" },
      { url: "https://127.0.0.1/", events: ["*"], description: "   " },
      { url: "https://127.0.0.1/", events: ["*"], description: "x".repeat(129) },
      { url: "https://127.0.0.1/", events: ["*"], description: 7 },
    ];
    for (const body of bad) {
      const res = await v.asMaster("POST", "/webhooks", body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(Object.keys((await res.json()) as object)).toEqual(["error"]);
    }
    const notJson = await v.request("POST", "/webhooks", { raw: "url=https://x", contentType: "application/x-www-form-urlencoded" });
    expect(notJson.status).toBe(400);
    expect(await countRows(v, "webhooks")).toBe(1);
  });

  it("counts description characters as code points: 128 emoji are accepted", async () => {
    const v = vaultWith();
    const description = "\u{1F514}".repeat(128);
    expect((await createWebhook(v, { url: "https://127.0.0.1/", events: ["*"], description })).description).toBe(description);
    const res = await v.asMaster("POST", "/webhooks", { url: "https://127.0.0.1/", events: ["*"], description: "\u{1F514}".repeat(129) });
    expect(res.status).toBe(400);
  });

  it("answers 401 without a token, 403 for principal keys and 405 for other methods", async () => {
    const v = vaultWith();
    await expectStatus(v.request("GET", "/webhooks", { token: null }), 401);
    await expectStatus(v.request("POST", "/webhooks", { token: "vsk_wrong", body: { url: "https://127.0.0.1/", events: ["*"] } }), 401);
    const orgId = await createOrg(v);
    const owner = await createPrincipal(v, orgId, "owner");
    await expectStatus(v.request("GET", "/webhooks", { token: owner.token }), 403);
    await expectStatus(v.request("POST", "/webhooks", { token: owner.token, body: { url: "https://127.0.0.1/", events: ["*"] } }), 403);
    const res = await v.asMaster("PUT", "/webhooks");
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, HEAD, POST");
    const one = await createWebhook(v, { url: "https://127.0.0.1/", events: ["*"] });
    const get = await v.asMaster("GET", `/webhooks/${one.id as string}`);
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("DELETE");
    expect(await countRows(v, "webhooks")).toBe(1);
  });

  it("is documented in the OpenAPI document", async () => {
    const v = vaultWith();
    const doc = (await (await v.request("GET", "/openapi.json", { token: null })).json()) as { paths: Record<string, Record<string, unknown>> };
    expect(Object.keys(doc.paths["/webhooks"] ?? {}).sort()).toEqual(["get", "post"]);
    expect(Object.keys(doc.paths["/webhooks/{id}"] ?? {})).toEqual(["delete"]);
    expect(Object.keys(doc.paths["/webhooks/{id}/deliveries"] ?? {})).toEqual(["get"]);
    expect(Object.keys(doc.paths["/orgs/{org_id}/webhooks"] ?? {}).sort()).toEqual(["get", "post"]);
    expect(Object.keys(doc.paths["/orgs/{org_id}/webhooks/{id}"] ?? {})).toEqual(["delete"]);
    expect(Object.keys(doc.paths["/orgs/{org_id}/webhooks/{id}/deliveries"] ?? {})).toEqual(["get"]);
  });
});

describe("scoped keys and the audit log", () => {
  async function scopedKey(v: TestVault, permissions: string[], prefix?: string): Promise<string> {
    const body = await expectStatus(v.asMaster("POST", "/keys", { name: "k", permissions, ...(prefix ? { prefix } : {}) }), 201);
    return body.token as string;
  }

  it("lets admin keys manage global webhooks and refuses the other permissions", async () => {
    const v = vaultWith();
    const admin = await scopedKey(v, ["admin"]);
    const reader = await scopedKey(v, ["read", "write", "delete"]);
    const hook = await expectStatus(v.request("POST", "/webhooks", { token: admin, body: { url: "https://127.0.0.1/", events: ["*"] } }), 201);
    expect(await expectStatus(v.request("GET", "/webhooks", { token: admin }), 200)).toEqual({ webhooks: [shown(hook)] });
    await expectStatus(v.request("GET", "/webhooks", { token: reader }), 403);
    await expectStatus(v.request("POST", "/webhooks", { token: reader, body: { url: "https://127.0.0.1/", events: ["*"] } }), 403);
    await expectStatus(v.request("DELETE", `/webhooks/${hook.id as string}`, { token: reader }), 403);
    await expectStatus(v.request("GET", `/webhooks/${hook.id as string}/deliveries`, { token: reader }), 403);
    await expectStatus(v.request("DELETE", `/webhooks/${hook.id as string}`, { token: admin }), 200);
  });

  it("limits a prefix-scoped admin key's webhooks to events of its prefix, and what it sees to its own", async () => {
    const v = vaultWith();
    const teamA = await scopedKey(v, ["admin"], "team-a/");
    const master = await createWebhook(v, { url: "https://127.0.0.1/master", events: ["*"] });
    const scoped = await expectStatus(
      v.request("POST", "/webhooks", { token: teamA, body: { url: "https://127.0.0.1/a", events: ["*"] } }),
      201,
    );
    await expectStatus(v.asMaster("POST", "/secrets", { key: "team-a/db", value: "1" }), 201);
    await expectStatus(v.asMaster("POST", "/secrets", { key: "team-b/db", value: "2" }), 201);
    await expectStatus(v.asMaster("POST", "/secrets", { value: "public" }), 201);
    const rows = await queuedRows(v);
    expect(rows.filter((r) => r.webhook === scoped.id).map((r) => r.body.data)).toEqual([
      { key: "team-a/db", read_count: 0, max_reads: null, expires_at: null },
    ]);
    expect(rows.filter((r) => r.webhook === master.id)).toHaveLength(3);

    expect(await expectStatus(v.request("GET", "/webhooks", { token: teamA }), 200)).toEqual({ webhooks: [shown(scoped)] });
    await expectStatus(v.request("DELETE", `/webhooks/${master.id as string}`, { token: teamA }), 404);
    await expectStatus(v.request("GET", `/webhooks/${master.id as string}/deliveries`, { token: teamA }), 404);
    await expectStatus(v.request("POST", `/webhooks/${master.id as string}/rotate`, { token: teamA }), 404);
    expect(await expectStatus(v.asMaster("GET", "/webhooks"), 200)).toEqual({ webhooks: [shown(master), shown(scoped)] });
  });

  it("audits webhook.created and webhook.deleted with the webhook id as key", async () => {
    const v = vaultWith();
    const hook = await createWebhook(v, { url: "https://127.0.0.1/", events: ["*"] });
    await expectStatus(v.asMaster("DELETE", `/webhooks/${hook.id as string}`), 200);
    const audit = await expectStatus(v.asMaster("GET", `/audit?key=${hook.id as string}`), 200);
    expect((audit.entries as { action: string; key: string; actor: string }[]).map((e) => [e.action, e.key, e.actor])).toEqual([
      ["webhook.deleted", hook.id, "master"],
      ["webhook.created", hook.id, "master"],
    ]);

    const orgId = await createOrg(v);
    const admin = await createPrincipal(v, orgId, "admin");
    const orgHook = await expectStatus(
      v.request("POST", `/orgs/${orgId}/webhooks`, { token: admin.token, body: { url: "https://127.0.0.1/", events: ["*"] } }),
      201,
    );
    const orgAudit = await expectStatus(v.asMaster("GET", `/orgs/${orgId}/audit?action=webhook.created`), 200);
    expect(orgAudit.entries).toEqual([expect.objectContaining({ action: "webhook.created", key: orgHook.id, principal_id: admin.id })]);
  });
});

describe("org webhook routes", () => {
  it("take the same shapes plus org_id, with the M permission", async () => {
    const v = vaultWith();
    const orgId = await createOrg(v, "acme");
    const admin = await createPrincipal(v, orgId, "admin");
    const writer = await createPrincipal(v, orgId, "writer");
    await createRole(v, orgId, "hooks", "M");
    const hooks = await createPrincipal(v, orgId, "hooks", "hook-manager");
    const base = `/orgs/${orgId}/webhooks`;

    const created = await expectStatus(
      v.request("POST", base, { token: admin.token, body: { url: "https://127.0.0.1:9/org", events: ["secret.created"] } }),
      201,
    );
    expect(created).toEqual({
      id: expect.stringMatching(/^wh_/),
      url: "https://127.0.0.1:9/org",
      events: ["secret.created"],
      description: null,
      created_at: START_SECONDS,
      org_id: orgId,
      secret: expect.stringMatching(/^whsec_/),
    });
    expect(await expectStatus(v.request("GET", base, { token: hooks.token }), 200)).toEqual({ webhooks: [shown(created)] });
    expect(await expectStatus(v.asMaster("GET", base), 200)).toEqual({ webhooks: [shown(created)] });
    // Org and global webhooks are separate lists.
    expect(await expectStatus(v.asMaster("GET", "/webhooks"), 200)).toEqual({ webhooks: [] });
    await expectStatus(v.asMaster("DELETE", `/webhooks/${created.id as string}`), 404);

    await expectStatus(v.request("GET", base, { token: writer.token }), 403);
    await expectStatus(v.request("POST", base, { token: writer.token, body: { url: "https://127.0.0.1/", events: ["*"] } }), 403);
    await expectStatus(v.request("DELETE", `${base}/${created.id as string}`, { token: writer.token }), 403);

    const other = await createOrg(v, "globex");
    const otherAdmin = await createPrincipal(v, other, "admin");
    await expectStatus(v.request("GET", base, { token: otherAdmin.token }), 403);
    await expectStatus(v.request("GET", `/orgs/${other}/webhooks`, { token: otherAdmin.token }), 200);
    await expectStatus(v.request("DELETE", `/orgs/${other}/webhooks/${created.id as string}`, { token: otherAdmin.token }), 404);

    await expectStatus(v.asMaster("GET", "/orgs/org_doesnotexist/webhooks"), 404);
    await expectStatus(v.asMaster("POST", "/orgs/org_doesnotexist/webhooks", { url: "https://127.0.0.1/", events: ["*"] }), 404);
    await expectStatus(v.asMaster("POST", "/orgs/org_doesnotexist/webhooks", { url: "https://127.0.0.1/", events: [] }), 400);

    await expectStatus(v.request("DELETE", `${base}/${created.id as string}`, { token: hooks.token }), 200);
    expect(await expectStatus(v.asMaster("GET", base), 200)).toEqual({ webhooks: [] });
  });

  it("keep an org from being deleted while it has webhooks", async () => {
    const v = vaultWith();
    const orgId = await createOrg(v, "acme");
    const hook = await createWebhook(v, { url: "https://127.0.0.1/", events: ["*"] }, `/orgs/${orgId}/webhooks`);
    await expectStatus(v.asMaster("DELETE", `/orgs/${orgId}`), 409);
    await expectStatus(v.asMaster("DELETE", `/orgs/${orgId}/webhooks/${hook.id as string}`), 200);
    await expectStatus(v.asMaster("DELETE", `/orgs/${orgId}`), 200);
  });
});

/** The outbox rows: each queued event's type and, per delivery, its webhook. */
