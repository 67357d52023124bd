import { createServer as createTcpServer } from "node:net";
import type { Server as TcpServer, Socket } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHmac, timingSafeEqual } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../src/db.js";
import { SYSTEM_ORIGIN } from "../src/domain/events.js";
import { DELIVERY_RETENTION_MS, eventPayload } from "../src/domain/webhooks.js";
import { checkWebhookTarget, isPublicAddress, parseWebhookUrl } from "../src/webhooks/address-guard.js";
import type { Lookup } from "../src/webhooks/address-guard.js";
import type { WebhookSettings } from "../src/webhooks/index.js";
import type { Transport } from "../src/webhooks/transport.js";
import { MAX_RETRY_DELAY_MS, retryDelayMs } from "../src/webhooks/worker.js";
import { version } from "../src/version.js";
import { buildTestVault } from "./helpers.js";
import type { TestVault } from "./helpers.js";
import { createOrg, createPrincipal, createRole, expectStatus } from "./org-helpers.js";
import { makeCertificate, startReceiver } from "./webhook-receiver.js";
import type { Receiver, TestCertificate } from "./webhook-receiver.js";

const SECRET = "test-webhook-secret-0123456789";
const START_SECONDS = Math.floor(Date.UTC(2026, 0, 1) / 1000);

/** A lookup that must never be reached (IP literals and localhost names need none). */
const noLookup: Lookup = () => Promise.reject(new Error("no DNS in tests"));

let cert: TestCertificate;
let receiver: Receiver;
const toClose: (() => Promise<void> | void)[] = [];

beforeAll(async () => {
  cert = await makeCertificate();
});

afterEach(async () => {
  for (const close of toClose.splice(0).reverse()) await close();
});

/** A vault whose worker trusts the test certificate and may reach loopback. */
function vaultWith(settings: WebhookSettings = {}): TestVault {
  const v = buildTestVault({
    webhooks: {
      secret: SECRET,
      allowPrivate: true,
      ca: cert.cert,
      lookup: noLookup,
      random: () => 0.5,
      retryBaseMs: 1000,
      maxAttempts: 4,
      timeoutMs: 5000,
      ...settings,
    },
  });
  toClose.push(() => v.webhooks.worker.stop());
  return v;
}

async function newReceiver(): Promise<Receiver> {
  const r = await startReceiver(cert);
  toClose.push(() => r.close());
  return r;
}

async function createWebhook(v: TestVault, body: Record<string, unknown>, path = "/webhooks"): Promise<Record<string, unknown>> {
  return expectStatus(v.asMaster("POST", path, body), 201);
}

function sign(body: string, secret = SECRET): string {
  return createHmac("sha256", secret).update(body).digest("hex");
}

function count(v: TestVault, table: string): number {
  return (v.db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
}

describe("the address guard", () => {
  it("accepts only public unicast addresses", () => {
    for (const ok of ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111"]) expect(isPublicAddress(ok), ok).toBe(true);
    for (const bad of [
      "127.0.0.1",
      "127.255.255.254",
      "10.0.0.1",
      "172.16.0.1",
      "192.168.1.1",
      "169.254.169.254",
      "0.0.0.0",
      "100.64.0.1",
      "224.0.0.1",
      "255.255.255.255",
      "::1",
      "::",
      "::ffff:7f00:1",
      "::ffff:93.184.216.34",
      "::7f00:1",
      "::127.0.0.1",
      "::a00:1",
      "::8.8.8.8",
      "::2",
      "fe80::1",
      "fc00::1",
      "fd12:3456::1",
      "64:ff9b::7f00:1",
      "2002:7f00:1::",
      "not an address",
      "2130706433",
    ]) {
      expect(isPublicAddress(bad), bad).toBe(false);
    }
  });

  const refused = [
    "https://127.0.0.1",
    "https://127.0.0.1:8443/hook",
    "https://localhost",
    "https://LOCALHOST./x",
    "https://api.localhost",
    "https://10.0.0.1",
    "https://172.16.5.4",
    "https://192.168.0.10",
    "https://[::1]",
    "https://[::ffff:127.0.0.1]",
    "https://[::ffff:7f00:1]",
    "https://[::127.0.0.1]/",
    "https://[::7f00:1]",
    "https://[::10.0.0.1]",
    "https://[fe80::1]",
    "https://[fd00::1]",
    "https://2130706433",
    "https://0177.0.0.1",
    "https://0x7f.0.0.1",
    "https://127.1",
    "https://169.254.169.254/latest/meta-data",
    "https://0.0.0.0",
    "https://0",
    "https://100.64.0.1",
  ];

  it.each(refused)("refuses %s at creation without resolving anything", async (url) => {
    const v = vaultWith({ allowPrivate: false });
    const res = await v.asMaster("POST", "/webhooks", { url, events: ["*"] });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: string };
    expect(body.error).toMatch(/non-public address/);
    expect(count(v, "webhooks")).toBe(0);
  });

  it("refuses a host name that resolves to a private address, or to any private address among public ones", async () => {
    const answers: Record<string, string[]> = {
      "internal.example": ["10.1.2.3"],
      "mixed.example": ["93.184.216.34", "127.0.0.1"],
      "mapped.example": ["::ffff:10.0.0.1"],
      "public.example": ["93.184.216.34", "2606:4700::6810:84e5"],
    };
    const lookup: Lookup = async (host) => answers[host] ?? Promise.reject(new Error("ENOTFOUND"));
    const v = vaultWith({ allowPrivate: false, lookup });
    for (const host of ["internal.example", "mixed.example", "mapped.example"]) {
      const res = await v.asMaster("POST", "/webhooks", { url: `https://${host}/hook`, events: ["*"] });
      expect(res.status, host).toBe(400);
    }
    expect(count(v, "webhooks")).toBe(0);
    await createWebhook(v, { url: "https://public.example/hook", events: ["*"] });
    expect(count(v, "webhooks")).toBe(1);
  });

  it("accepts a host name that does not resolve (it resolves to no refused address); delivery checks it again", async () => {
    const v = vaultWith({ allowPrivate: false, lookup: () => Promise.reject(Object.assign(new Error("ENOTFOUND"), { code: "ENOTFOUND" })) });
    const hook = await createWebhook(v, { url: "https://nowhere.example/hook", events: ["*"] });
    expect(hook.url).toBe("https://nowhere.example/hook");
    await expectStatus(v.asMaster("POST", "/secrets", { key: "k", value: "v" }), 201);
    expect(await v.webhooks.worker.tick()).toBe(1);
    const { deliveries } = (await expectStatus(v.asMaster("GET", `/webhooks/${hook.id as string}/deliveries`), 200)) as {
      deliveries: { status: string; error: string }[];
    };
    expect(deliveries).toEqual([expect.objectContaining({ status: "retrying", error: "connection failed (ENOTFOUND)" })]);
  });

  it("accepts a public address literal without a lookup", async () => {
    const v = vaultWith({ allowPrivate: false });
    const body = await createWebhook(v, { url: "https://93.184.216.34:8443/hook?x=1", events: ["*"] });
    expect(body.url).toBe("https://93.184.216.34:8443/hook?x=1");
  });

  it("lets VAULT_WEBHOOK_ALLOW_PRIVATE lift the guard", async () => {
    const v = vaultWith({ allowPrivate: true });
    for (const url of ["https://127.0.0.1:9999/hook", "https://localhost/hook", "https://[::1]/"]) {
      await createWebhook(v, { url, events: ["*"] });
    }
    expect(count(v, "webhooks")).toBe(3);
  });

  it("checks the syntax of the url whatever the guard setting", async () => {
    for (const url of [
      "http://93.184.216.34/hook",
      "ftp://93.184.216.34/",
      "93.184.216.34/hook",
      "https://",
      "https://user:pass@93.184.216.34/",
      "javascript:alert(1)",
      `https://93.184.216.34/${"a".repeat(2100)}`,
    ]) {
      expect(() => parseWebhookUrl(url), url).toThrow();
    }
    const v = vaultWith({ allowPrivate: true });
    const res = await v.asMaster("POST", "/webhooks", { url: "http://127.0.0.1/secret-path-xyz", events: ["*"] });
    expect(res.status).toBe(400);
    const text = await res.text();
    expect(text).toContain("https://");
    expect(text).not.toContain("secret-path-xyz");
  });

  it("checks every address a name resolves to", async () => {
    await expect(
      checkWebhookTarget(new URL("https://slow.example/"), false, async () => ["127.0.0.1"]),
    ).rejects.toThrow(/non-public/);
    await expect(checkWebhookTarget(new URL("https://ok.example/"), false, async () => ["93.184.216.34"])).resolves.toBeUndefined();
  });
});

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
    });
    const second = await createWebhook(v, { url: "https://127.0.0.1:9/all", events: ["*"], description: "  audit sink  " });
    expect(second.description).toBe("audit sink");

    const list = await expectStatus(v.asMaster("GET", "/webhooks"), 200);
    expect(list).toEqual({ webhooks: [created, second] });

    const page = await expectStatus(v.asMaster("GET", "/webhooks?limit=1"), 200);
    expect(page.webhooks).toEqual([created]);
    const rest = await expectStatus(v.asMaster("GET", `/webhooks?limit=1&cursor=${page.next_cursor as string}`), 200);
    expect(rest).toEqual({ webhooks: [second] });

    expect(await expectStatus(v.asMaster("DELETE", `/webhooks/${created.id as string}`), 200)).toEqual({ deleted: true });
    await expectStatus(v.asMaster("DELETE", `/webhooks/${created.id as string}`), 404);
    await expectStatus(v.asMaster("DELETE", "/webhooks/wh_nope"), 404);
    await expectStatus(v.asMaster("GET", `/webhooks/${created.id as string}/deliveries`), 404);
    expect(await expectStatus(v.asMaster("GET", "/webhooks"), 200)).toEqual({ webhooks: [second] });
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
    expect(count(v, "webhooks")).toBe(1);
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
    expect(count(v, "webhooks")).toBe(1);
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
    expect(await expectStatus(v.request("GET", "/webhooks", { token: admin }), 200)).toEqual({ webhooks: [hook] });
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
    const rows = queued(v);
    expect(rows.filter((r) => r.webhook === scoped.id).map((r) => r.body.data)).toEqual([
      { key: "team-a/db", read_count: 0, max_reads: null, expires_at: null },
    ]);
    expect(rows.filter((r) => r.webhook === master.id)).toHaveLength(3);

    expect(await expectStatus(v.request("GET", "/webhooks", { token: teamA }), 200)).toEqual({ webhooks: [scoped] });
    await expectStatus(v.request("DELETE", `/webhooks/${master.id as string}`, { token: teamA }), 404);
    await expectStatus(v.request("GET", `/webhooks/${master.id as string}/deliveries`, { token: teamA }), 404);
    expect(await expectStatus(v.asMaster("GET", "/webhooks"), 200)).toEqual({ webhooks: [master, scoped] });
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
    });
    expect(await expectStatus(v.request("GET", base, { token: hooks.token }), 200)).toEqual({ webhooks: [created] });
    expect(await expectStatus(v.asMaster("GET", base), 200)).toEqual({ webhooks: [created] });
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
function queued(v: TestVault): { webhook: string; type: string; body: Record<string, unknown> }[] {
  return (
    v.db
      .prepare(
        `SELECT d.webhook_id AS webhook, e.type, e.body FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id ORDER BY d.id`,
      )
      .all() as { webhook: string; type: string; body: string }[]
  ).map((r) => ({ webhook: r.webhook, type: r.type, body: JSON.parse(r.body) as Record<string, unknown> }));
}

describe("the outbox", () => {
  it("writes nothing when no webhook listens", async () => {
    const v = vaultWith();
    await expectStatus(v.asMaster("POST", "/secrets", { key: "a", value: "v" }), 201);
    await expectStatus(v.asMaster("GET", "/secrets/a"), 200);
    expect(count(v, "webhook_events")).toBe(0);
  });

  it("queues the subscribed events of the scope, in order, in the transaction of the change", async () => {
    const v = vaultWith();
    const all = await createWebhook(v, { url: "https://127.0.0.1/all", events: ["*"] });
    const reads = await createWebhook(v, { url: "https://127.0.0.1/reads", events: ["secret.read"] });
    const orgId = await createOrg(v);
    const orgHook = await createWebhook(v, { url: "https://127.0.0.1/org", events: ["*"] }, `/orgs/${orgId}/webhooks`);

    await expectStatus(v.asMaster("POST", "/secrets", { key: "db/pass", value: "hunter2", max_reads: 2, ttl_seconds: 60 }), 201);
    await expectStatus(v.asMaster("GET", "/secrets/db/pass"), 200);
    await expectStatus(v.asMaster("GET", "/secrets/db/pass"), 200);
    // A refused change queues nothing.
    await expectStatus(v.asMaster("POST", "/secrets", { key: "db/pass", value: "x" }), 201);
    await expectStatus(v.asMaster("POST", "/secrets", { key: "db/pass", value: "x" }), 409);

    const rows = queued(v);
    expect(rows.map((r) => [r.webhook, r.type])).toEqual([
      [all.id, "secret.created"],
      [all.id, "secret.read"],
      [reads.id, "secret.read"],
      [all.id, "secret.read"],
      [reads.id, "secret.read"],
      [all.id, "secret.burned"],
      [all.id, "secret.created"],
    ]);
    expect(rows[1]?.body).toEqual({
      id: expect.stringMatching(/^evt_[a-z2-7]{26}$/),
      type: "secret.read",
      timestamp: START_SECONDS,
      data: { key: "db/pass", read_count: 1, max_reads: 2, expires_at: START_SECONDS + 60 },
    });
    // One event, one id, whichever webhooks receive it.
    expect(rows[1]?.body.id).toBe(rows[2]?.body.id);
    expect(rows[5]?.body.data).toEqual({ key: "db/pass", read_count: 2, max_reads: 2, expires_at: START_SECONDS + 60 });
    for (const r of rows) expect(JSON.stringify(r.body)).not.toContain("hunter2");
    expect(rows.some((r) => r.webhook === orgHook.id)).toBe(false);
  });

  it("sends an org's events, with org_id, to that org's webhooks only", async () => {
    const v = vaultWith();
    const orgId = await createOrg(v, "acme");
    const other = await createOrg(v, "globex");
    const global = await createWebhook(v, { url: "https://127.0.0.1/g", events: ["*"] });
    const mine = await createWebhook(v, { url: "https://127.0.0.1/a", events: ["*"] }, `/orgs/${orgId}/webhooks`);
    await createWebhook(v, { url: "https://127.0.0.1/b", events: ["*"] }, `/orgs/${other}/webhooks`);

    await expectStatus(v.asMaster("POST", `/orgs/${orgId}/secrets`, { key: "k", value: "s3cret", max_reads: 1, delete: false }), 201);
    await expectStatus(v.asMaster("GET", `/orgs/${orgId}/secrets/k`), 200);
    const rows = queued(v);
    expect(rows.map((r) => [r.webhook, r.type])).toEqual([
      [mine.id, "secret.created"],
      [mine.id, "secret.read"],
      [mine.id, "secret.sealed"],
    ]);
    expect(rows[2]?.body.data).toEqual({ key: "k", read_count: 1, max_reads: 1, expires_at: null, org_id: orgId });
    expect(rows.some((r) => r.webhook === global.id)).toBe(false);
  });

  it("names public secrets by id and queues secret.expired from the sweeper", async () => {
    const v = vaultWith();
    await createWebhook(v, { url: "https://127.0.0.1/", events: ["secret.expired", "secret.deleted"] });
    const created = await expectStatus(v.asMaster("POST", "/secrets", { value: "drop", ttl_seconds: 10 }), 201);
    await expectStatus(v.asMaster("POST", "/secrets", { key: "gone", value: "x" }), 201);
    await expectStatus(v.asMaster("DELETE", "/secrets/gone"), 200);
    v.clock.advance(10_000);
    expect(await v.tx.run(() => v.secrets.expireDue(100, SYSTEM_ORIGIN))).toBe(1);
    const rows = queued(v);
    expect(rows.map((r) => r.type)).toEqual(["secret.deleted", "secret.expired"]);
    expect(rows[1]?.body.data).toEqual({ id: created.id, read_count: 0, max_reads: null, expires_at: START_SECONDS + 10 });
    expect(rows[1]?.body.timestamp).toBe(START_SECONDS + 10);
  });

  it("builds the payload from metadata only", () => {
    const body = eventPayload(
      "evt_x",
      { type: "secret.updated", scope: "org_1", key: "k", isPublic: false, readCount: 0, maxReads: 5, expiresAt: 1_500 },
      2_999,
    );
    expect(JSON.parse(body)).toEqual({
      id: "evt_x",
      type: "secret.updated",
      timestamp: 2,
      data: { key: "k", read_count: 0, max_reads: 5, expires_at: 1, org_id: "org_1" },
    });
  });
});

describe("the retry schedule", () => {
  it("waits base * 2^(n-2) before attempt n, +-20%, capped at one hour", () => {
    expect(retryDelayMs(2, 1000, () => 0.5)).toBe(1000);
    expect(retryDelayMs(3, 1000, () => 0.5)).toBe(2000);
    expect(retryDelayMs(8, 1000, () => 0.5)).toBe(64_000);
    expect(retryDelayMs(2, 1000, () => 0)).toBe(800);
    expect(retryDelayMs(2, 1000, () => 0.999999)).toBe(1200);
    expect(retryDelayMs(30, 1000, () => 0.5)).toBe(MAX_RETRY_DELAY_MS);
    expect(retryDelayMs(30, 1000, () => 0.999999)).toBe(MAX_RETRY_DELAY_MS);
    expect(() => retryDelayMs(1, 1000, () => 0.5)).toThrow(RangeError);
  });
});

describe("deliveries to a real HTTPS receiver", () => {
  it("posts the signed payload with the documented headers", async () => {
    const v = vaultWith();
    const r = await newReceiver();
    const hook = await createWebhook(v, { url: r.url, events: ["*"] });
    await expectStatus(v.asMaster("POST", "/secrets", { key: "api", value: "top-secret-value", max_reads: 1 }), 201);
    await expectStatus(v.asMaster("GET", "/secrets/api"), 200);
    expect(await v.webhooks.worker.tick()).toBe(3);

    expect(r.requests).toHaveLength(3);
    const types = r.requests.map((q) => JSON.parse(q.body).type as string).sort();
    expect(types).toEqual(["secret.burned", "secret.created", "secret.read"]);
    for (const req of r.requests) {
      expect(req.method).toBe("POST");
      expect(req.path).toBe("/hook");
      expect(req.body).not.toContain("top-secret-value");
      const payload = JSON.parse(req.body) as { id: string; type: string };
      expect(req.headers["content-type"]).toBe("application/json");
      expect(req.headers["user-agent"]).toBe(`ephemeral-vault/${version}`);
      expect(req.headers["x-vault-event"]).toBe(payload.type);
      expect(req.headers["x-vault-delivery"]).toBe(payload.id);
      const expected = Buffer.from(sign(req.body), "hex");
      const given = Buffer.from(String(req.headers["x-vault-signature"]), "hex");
      expect(given.length).toBe(32);
      expect(timingSafeEqual(given, expected)).toBe(true);
      expect(req.headers["x-vault-signature"]).not.toBe(sign(req.body, "another-secret-0123456789"));
    }
    const read = r.requests.find((q) => q.headers["x-vault-event"] === "secret.read");
    expect(JSON.parse(read?.body ?? "{}")).toEqual({
      id: expect.stringMatching(/^evt_/),
      type: "secret.read",
      timestamp: START_SECONDS,
      data: { key: "api", read_count: 1, max_reads: 1, expires_at: null },
    });

    const deliveries = await expectStatus(v.asMaster("GET", `/webhooks/${hook.id as string}/deliveries`), 200);
    expect(deliveries.deliveries).toHaveLength(3);
    expect((deliveries.deliveries as Record<string, unknown>[])[0]).toEqual({
      event_id: expect.stringMatching(/^evt_/),
      type: expect.any(String),
      attempt: 1,
      status: "delivered",
      http_status: 200,
      error: null,
      at: START_SECONDS,
    });
    // Nothing is sent twice.
    expect(await v.webhooks.worker.tick()).toBe(0);
    expect(r.requests).toHaveLength(3);
  });

  it("sends one webhook's deliveries one after another in event order, different webhooks in parallel", async () => {
    const log: string[] = [];
    const transport: Transport = {
      send: async (req) => {
        const what = `${new URL(req.url).pathname} ${(JSON.parse(req.body) as { type: string }).type}`;
        log.push(`start ${what}`);
        await new Promise((resolve) => setTimeout(resolve, 5));
        log.push(`end ${what}`);
        return { ok: true, httpStatus: 200 };
      },
      close: () => {},
    };
    const v = vaultWith({ transport });
    await createWebhook(v, { url: "https://127.0.0.1/a", events: ["*"] });
    await createWebhook(v, { url: "https://127.0.0.1/b", events: ["secret.read", "secret.burned"] });
    await expectStatus(v.asMaster("POST", "/secrets", { key: "k", value: "v", max_reads: 1 }), 201);
    await expectStatus(v.asMaster("GET", "/secrets/k"), 200);

    const first = v.webhooks.worker.tick();
    // While /a and /b have attempts in flight, a new event waits for them.
    await expectStatus(v.asMaster("POST", "/secrets", { key: "later", value: "v" }), 201);
    expect(await v.webhooks.worker.tick()).toBe(0);
    expect(await first).toBe(5);
    expect(log.filter((l) => l.includes("/a "))).toEqual([
      "start /a secret.created",
      "end /a secret.created",
      "start /a secret.read",
      "end /a secret.read",
      "start /a secret.burned",
      "end /a secret.burned",
    ]);
    expect(log.filter((l) => l.includes("/b "))).toEqual([
      "start /b secret.read",
      "end /b secret.read",
      "start /b secret.burned",
      "end /b secret.burned",
    ]);
    // /b did not wait for /a.
    expect(log.indexOf("start /b secret.read")).toBeLessThan(log.indexOf("end /a secret.created"));
    expect(await v.webhooks.worker.tick()).toBe(1);
    expect(log.at(-1)).toBe("end /a secret.created");
  });

  it("does not send the deliveries still waiting their turn once their webhook is deleted", async () => {
    const sent: string[] = [];
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const transport: Transport = {
      send: async (req) => {
        sent.push((JSON.parse(req.body) as { type: string }).type);
        await held;
        return { ok: true, httpStatus: 200 };
      },
      close: () => {},
    };
    const v = vaultWith({ transport });
    const hook = await createWebhook(v, { url: "https://127.0.0.1/a", events: ["*"] });
    await expectStatus(v.asMaster("POST", "/secrets", { key: "k", value: "v", max_reads: 1 }), 201);
    await expectStatus(v.asMaster("GET", "/secrets/k"), 200);
    const round = v.webhooks.worker.tick();
    while (sent.length === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    await expectStatus(v.asMaster("DELETE", `/webhooks/${hook.id as string}`), 200);
    release();
    await round;
    // The attempt on the wire completed; the two behind it were never sent.
    expect(sent).toEqual(["secret.created"]);
    expect(count(v, "webhook_deliveries")).toBe(0);
  });

  it("delivers only the subscribed event types", async () => {
    const v = vaultWith();
    const r = await newReceiver();
    await createWebhook(v, { url: r.url, events: ["secret.deleted"] });
    await expectStatus(v.asMaster("POST", "/secrets", { key: "a", value: "1" }), 201);
    await expectStatus(v.asMaster("GET", "/secrets/a"), 200);
    await expectStatus(v.asMaster("DELETE", "/secrets/a"), 200);
    await v.webhooks.worker.tick();
    expect(r.requests.map((q) => q.headers["x-vault-event"])).toEqual(["secret.deleted"]);
  });

  it("retries a failed delivery with backoff, with the same event id, body and signature", async () => {
    const v = vaultWith({ retryBaseMs: 1000, maxAttempts: 5 });
    const r = await newReceiver();
    r.respond([500, 503], 200);
    const hook = await createWebhook(v, { url: r.url, events: ["secret.created"] });
    await expectStatus(v.asMaster("POST", "/secrets", { key: "a", value: "1" }), 201);

    expect(await v.webhooks.worker.tick()).toBe(1);
    expect(r.requests).toHaveLength(1);
    // Not due again before its backoff (attempt 2 waits base = 1000 ms; no jitter with random 0.5).
    v.clock.advance(999);
    expect(await v.webhooks.worker.tick()).toBe(0);
    v.clock.advance(1);
    expect(await v.webhooks.worker.tick()).toBe(1);
    // Attempt 3 waits 2 * base.
    v.clock.advance(1999);
    expect(await v.webhooks.worker.tick()).toBe(0);
    v.clock.advance(1);
    expect(await v.webhooks.worker.tick()).toBe(1);
    expect(r.requests).toHaveLength(3);

    const [first, ...others] = r.requests;
    for (const again of others) {
      expect(again.body).toBe(first?.body);
      expect(again.headers["x-vault-delivery"]).toBe(first?.headers["x-vault-delivery"]);
      expect(again.headers["x-vault-signature"]).toBe(first?.headers["x-vault-signature"]);
    }
    const list = await expectStatus(v.asMaster("GET", `/webhooks/${hook.id as string}/deliveries`), 200);
    const eventId = JSON.parse(first?.body ?? "{}").id as string;
    expect(list.deliveries).toEqual([
      { event_id: eventId, type: "secret.created", attempt: 3, status: "delivered", http_status: 200, error: null, at: START_SECONDS + 3 },
      { event_id: eventId, type: "secret.created", attempt: 2, status: "retrying", http_status: 503, error: "HTTP 503", at: START_SECONDS + 1 },
      { event_id: eventId, type: "secret.created", attempt: 1, status: "retrying", http_status: 500, error: "HTTP 500", at: START_SECONDS },
    ]);
    const page = await expectStatus(v.asMaster("GET", `/webhooks/${hook.id as string}/deliveries?limit=2`), 200);
    expect((page.deliveries as unknown[]).length).toBe(2);
    const next = await expectStatus(v.asMaster("GET", `/webhooks/${hook.id as string}/deliveries?cursor=${page.next_cursor as string}`), 200);
    expect(next.deliveries).toEqual([(list.deliveries as unknown[])[2]]);
  });

  it("marks a delivery failed after the last attempt and stops", async () => {
    const v = vaultWith({ maxAttempts: 3, retryBaseMs: 10 });
    const r = await newReceiver();
    r.respond([], 500);
    const hook = await createWebhook(v, { url: r.url, events: ["*"] });
    await expectStatus(v.asMaster("POST", "/secrets", { key: "a", value: "1" }), 201);
    for (let i = 0; i < 5; i++) {
      await v.webhooks.worker.tick();
      v.clock.advance(60_000);
    }
    expect(r.requests).toHaveLength(3);
    const list = await expectStatus(v.asMaster("GET", `/webhooks/${hook.id as string}/deliveries`), 200);
    expect((list.deliveries as { attempt: number; status: string }[]).map((d) => [d.attempt, d.status])).toEqual([
      [3, "failed"],
      [2, "retrying"],
      [1, "retrying"],
    ]);
    expect(v.db.prepare("SELECT state FROM webhook_deliveries").all()).toEqual([{ state: "failed" }]);
  });

  it("sends nothing more to a deleted webhook, pending retries included", async () => {
    const v = vaultWith();
    const r = await newReceiver();
    r.respond([500], 200);
    const hook = await createWebhook(v, { url: r.url, events: ["*"] });
    await expectStatus(v.asMaster("POST", "/secrets", { key: "a", value: "1" }), 201);
    await v.webhooks.worker.tick();
    expect(r.requests).toHaveLength(1);
    // A retry of the first event is pending; a second event is queued for both webhooks.
    await createWebhook(v, { url: r.url.replace("/hook", "/keep"), events: ["*"] });
    await expectStatus(v.asMaster("POST", "/secrets", { key: "b", value: "2" }), 201);
    expect(v.db.prepare("SELECT count(*) AS n FROM webhook_deliveries WHERE webhook_id = ? AND state = 'pending'").get(hook.id as string)).toEqual({ n: 2 });

    await expectStatus(v.asMaster("DELETE", `/webhooks/${hook.id as string}`), 200);
    v.clock.advance(60_000);
    expect(await v.webhooks.worker.tick()).toBe(1);
    expect(r.requests.map((q) => q.path)).toEqual(["/hook", "/keep"]);
    expect(v.db.prepare("SELECT count(*) AS n FROM webhook_deliveries WHERE webhook_id = ?").get(hook.id as string)).toEqual({ n: 0 });
  });

  it("does not follow redirects", async () => {
    const v = vaultWith({ maxAttempts: 1 });
    const r = await newReceiver();
    r.respond([302]);
    const hook = await createWebhook(v, { url: r.url, events: ["*"] });
    await expectStatus(v.asMaster("POST", "/secrets", { key: "a", value: "1" }), 201);
    await v.webhooks.worker.tick();
    expect(r.requests).toHaveLength(1);
    const list = await expectStatus(v.asMaster("GET", `/webhooks/${hook.id as string}/deliveries`), 200);
    expect(list.deliveries).toEqual([
      expect.objectContaining({ status: "failed", http_status: 302, error: "HTTP 302 (redirects are not followed)" }),
    ]);
  });

  it("verifies the receiver's certificate", async () => {
    const v = vaultWith({ ca: undefined, maxAttempts: 1 });
    const r = await newReceiver();
    const hook = await createWebhook(v, { url: r.url, events: ["*"] });
    await expectStatus(v.asMaster("POST", "/secrets", { key: "a", value: "1" }), 201);
    await v.webhooks.worker.tick();
    expect(r.requests).toHaveLength(0);
    const list = await expectStatus(v.asMaster("GET", `/webhooks/${hook.id as string}/deliveries`), 200);
    expect(list.deliveries).toEqual([expect.objectContaining({ status: "failed", http_status: null, error: expect.stringMatching(/^TLS error/) })]);
  });

  it("gives up an attempt at the timeout", async () => {
    const v = vaultWith({ timeoutMs: 200, maxAttempts: 2 });
    const sockets: Socket[] = [];
    const silent: TcpServer = createTcpServer((s) => sockets.push(s));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    toClose.push(
      () =>
        new Promise<void>((resolve) => {
          for (const s of sockets) s.destroy();
          silent.close(() => resolve());
        }),
    );
    const port = (silent.address() as { port: number }).port;
    const hook = await createWebhook(v, { url: `https://127.0.0.1:${port}/hook`, events: ["*"] });
    await expectStatus(v.asMaster("POST", "/secrets", { key: "a", value: "1" }), 201);
    await v.webhooks.worker.tick();
    const list = await expectStatus(v.asMaster("GET", `/webhooks/${hook.id as string}/deliveries`), 200);
    expect(list.deliveries).toEqual([
      expect.objectContaining({ attempt: 1, status: "retrying", http_status: null, error: "timeout after 200 ms" }),
    ]);
  });

  it("refuses a private address again at connection time", async () => {
    const v = vaultWith({ allowPrivate: false, maxAttempts: 1 });
    const r = await newReceiver();
    // A webhook stored while the guard was off (or by hand): the worker still refuses it.
    v.db
      .prepare("INSERT INTO webhooks (id, org_id, url, events, description, key_prefix, created_at) VALUES (?, NULL, ?, '[\"*\"]', NULL, NULL, 0)")
      .run("wh_aaaaaaaaaaaaaaaaaaaaaaaaaa", r.url);
    await expectStatus(v.asMaster("POST", "/secrets", { key: "a", value: "1" }), 201);
    await v.webhooks.worker.tick();
    expect(r.requests).toHaveLength(0);
    const list = await expectStatus(v.asMaster("GET", "/webhooks/wh_aaaaaaaaaaaaaaaaaaaaaaaaaa/deliveries"), 200);
    expect(list.deliveries).toEqual([expect.objectContaining({ status: "failed", error: "address not allowed" })]);
  });

  it("refuses a name that resolved to a public address at creation and to loopback at delivery (DNS rebinding)", async () => {
    const r = await newReceiver();
    const answers = [["93.184.216.34"], ["127.0.0.1"]];
    let calls = 0;
    const rebinding: Lookup = async () => answers[Math.min(calls++, 1)] ?? [];
    const v = vaultWith({ allowPrivate: false, lookup: rebinding, maxAttempts: 1 });
    const hook = await createWebhook(v, { url: `https://rebind.example:${r.port}/hook`, events: ["*"] });
    await expectStatus(v.asMaster("POST", "/secrets", { key: "a", value: "1" }), 201);
    await v.webhooks.worker.tick();
    expect(calls).toBe(2);
    expect(r.requests).toHaveLength(0);
    const list = await expectStatus(v.asMaster("GET", `/webhooks/${hook.id as string}/deliveries`), 200);
    expect(list.deliveries).toEqual([expect.objectContaining({ status: "failed", error: "address not allowed" })]);
  });

  it("never makes a request wait for a slow receiver", async () => {
    const v = vaultWith();
    const held: Socket[] = [];
    // A receiver that accepts the request and never answers.
    const { createServer } = await import("node:https");
    const slow = createServer({ cert: cert.cert, key: cert.key }, (req) => held.push(req.socket));
    await new Promise<void>((resolve) => slow.listen(0, "127.0.0.1", resolve));
    toClose.push(
      () =>
        new Promise<void>((resolve) => {
          slow.close(() => resolve());
          slow.closeAllConnections();
        }),
    );
    const port = (slow.address() as { port: number }).port;
    await createWebhook(v, { url: `https://127.0.0.1:${port}/hook`, events: ["*"] });
    v.webhooks.worker.start();
    await expectStatus(v.asMaster("POST", "/secrets", { key: "a", value: "1" }), 201);
    while (held.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    // The receiver holds the first delivery; requests are answered all the same.
    for (let i = 0; i < 5; i++) {
      await expectStatus(v.asMaster("POST", "/secrets", { key: `k${i}`, value: "x" }), 201);
      await expectStatus(v.asMaster("GET", `/secrets/k${i}`), 200);
    }
    expect(held.length).toBeGreaterThanOrEqual(1);
    await v.webhooks.worker.stop();
    // The aborted attempt is not counted: it stays pending for the next start.
    const first = v.db.prepare("SELECT state, attempts FROM webhook_deliveries ORDER BY id LIMIT 1").get();
    expect(first).toEqual({ state: "pending", attempts: 0 });
  });

  it("delivers events of org secrets to the org's webhook", async () => {
    const v = vaultWith();
    const r = await newReceiver();
    const orgId = await createOrg(v);
    await createWebhook(v, { url: r.url, events: ["secret.created"] }, `/orgs/${orgId}/webhooks`);
    await expectStatus(v.asMaster("POST", `/orgs/${orgId}/secrets`, { key: "k", value: "v" }), 201);
    await v.webhooks.worker.tick();
    expect(r.requests).toHaveLength(1);
    expect(JSON.parse(r.requests[0]?.body ?? "{}").data).toEqual({ key: "k", read_count: 0, max_reads: null, expires_at: null, org_id: orgId });
  });

  it("removes finished deliveries after the retention period", async () => {
    const v = vaultWith();
    const r = await newReceiver();
    const hook = await createWebhook(v, { url: r.url, events: ["*"] });
    await expectStatus(v.asMaster("POST", "/secrets", { key: "a", value: "1" }), 201);
    await v.webhooks.worker.tick();
    expect(await v.webhooks.worker.cleanupNow()).toBe(0);
    v.clock.advance(DELIVERY_RETENTION_MS + 1);
    expect(await v.webhooks.worker.cleanupNow()).toBe(2);
    expect(count(v, "webhook_events")).toBe(0);
    expect(count(v, "webhook_attempts")).toBe(0);
    expect(await expectStatus(v.asMaster("GET", `/webhooks/${hook.id as string}/deliveries`), 200)).toEqual({ deliveries: [] });
  });
});

describe("durability", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it("delivers after a restart an event queued before it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ev-webhooks-"));
    dirs.push(dir);
    const file = join(dir, "vault.db");
    const r = await newReceiver();

    const firstDb = openDatabase(file);
    const first = buildTestVault({ db: firstDb, webhooks: { secret: SECRET, allowPrivate: true, ca: cert.cert } });
    await createWebhook(first, { url: r.url, events: ["secret.created"] });
    await expectStatus(first.asMaster("POST", "/secrets", { key: "a", value: "1" }), 201);
    // The process ends before the worker ran.
    first.tx.close();
    firstDb.close();
    expect(r.requests).toHaveLength(0);

    const secondDb = openDatabase(file);
    toClose.push(() => {
      secondDb.close();
    });
    const second = buildTestVault({ db: secondDb, webhooks: { secret: SECRET, allowPrivate: true, ca: cert.cert } });
    toClose.push(() => second.webhooks.worker.stop());
    expect(await second.webhooks.worker.tick()).toBe(1);
    expect(r.requests).toHaveLength(1);
    expect(r.requests[0]?.headers["x-vault-event"]).toBe("secret.created");
    expect(r.requests[0]?.headers["x-vault-signature"]).toBe(sign(r.requests[0]?.body ?? ""));
  });
});
