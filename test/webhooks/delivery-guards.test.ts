import { createServer as createTcpServer } from "node:net";
import type { Server as TcpServer, Socket } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/store/sqlite/db.js";
import { DELIVERY_RETENTION_MS } from "../../src/webhooks/outbox.js";
import type { Lookup } from "../../src/webhooks/address-guard.js";
import { buildSqliteTestVault, itSqlite } from "../support/helpers.js";
import { createOrg, expectStatus } from "../support/org-helpers.js";
import { useWebhookFixtures, SECRET, cert, toClose, vaultWith, newReceiver, createWebhook, sign, countRows } from "../support/webhook-helpers.js";

useWebhookFixtures();

// Deliveries to a real HTTPS receiver (docs/webhooks.md), continued from webhook-delivery.test.ts:
// what is refused or given up, org secrets' events, retention; and a restart (SQLite).

describe("deliveries to a real HTTPS receiver: refusals, timeouts, org events, retention", () => {
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
    await v.query(
      "INSERT INTO webhooks (id, org_id, url, events, description, key_prefix, created_at) VALUES (?, NULL, ?, '[\"*\"]', NULL, NULL, 0)",
      "wh_aaaaaaaaaaaaaaaaaaaaaaaaaa",
      r.url,
    );
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
    const [first] = await v.query("SELECT state, attempts FROM webhook_deliveries ORDER BY id LIMIT 1");
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
    expect(await countRows(v, "webhook_events")).toBe(0);
    expect(await countRows(v, "webhook_attempts")).toBe(0);
    expect(await expectStatus(v.asMaster("GET", `/webhooks/${hook.id as string}/deliveries`), 200)).toEqual({ deliveries: [] });
  });
});

describe("durability", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  itSqlite("delivers after a restart an event queued before it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ev-webhooks-"));
    dirs.push(dir);
    const file = join(dir, "vault.db");
    const r = await newReceiver();

    const firstDb = openDatabase(file);
    const first = buildSqliteTestVault({ db: firstDb, webhooks: { secret: SECRET, allowPrivate: true, ca: cert.cert } });
    await createWebhook(first, { url: r.url, events: ["secret.created"] });
    await expectStatus(first.asMaster("POST", "/secrets", { key: "a", value: "1" }), 201);
    // The process ends before the worker ran.
    first.sqlite.tx.close();
    firstDb.close();
    expect(r.requests).toHaveLength(0);

    const secondDb = openDatabase(file);
    toClose.push(() => {
      secondDb.close();
    });
    const second = buildSqliteTestVault({ db: secondDb, webhooks: { secret: SECRET, allowPrivate: true, ca: cert.cert } });
    toClose.push(() => second.webhooks.worker.stop());
    expect(await second.webhooks.worker.tick()).toBe(1);
    expect(r.requests).toHaveLength(1);
    expect(r.requests[0]?.headers["x-vault-event"]).toBe("secret.created");
    expect(r.requests[0]?.headers["x-vault-signature"]).toBe(sign(r.requests[0]?.body ?? ""));
  });
});
