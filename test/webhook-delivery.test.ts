import { createServer as createTcpServer } from "node:net";
import type { Server as TcpServer, Socket } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { timingSafeEqual } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "../src/store/sqlite/db.js";
import { DELIVERY_RETENTION_MS } from "../src/domain/webhook-outbox.js";
import type { Lookup } from "../src/webhooks/address-guard.js";
import type { Transport } from "../src/webhooks/transport.js";
import { MAX_RETRY_DELAY_MS, retryDelayMs } from "../src/webhooks/retry.js";
import { version } from "../src/version.js";
import { buildSqliteTestVault, itSqlite } from "./helpers.js";
import { createOrg, expectStatus } from "./org-helpers.js";
import { useWebhookFixtures, SECRET, START_SECONDS, cert, toClose, vaultWith, newReceiver, createWebhook, sign, countRows } from "./webhook-helpers.js";

useWebhookFixtures();

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
      next_attempt_at: null,
    });
    // Nothing is sent twice.
    expect(await v.webhooks.worker.tick()).toBe(0);
    expect(r.requests).toHaveLength(3);
  });

  it("sends one webhook's deliveries one after another in event order, different webhooks in parallel", async () => {
    const log: string[] = [];
    // Attempts are held until the gate opens, so the second tick surely runs while they are in flight.
    let open: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const transport: Transport = {
      send: async (req) => {
        const what = `${new URL(req.url).pathname} ${(JSON.parse(req.body) as { type: string }).type}`;
        log.push(`start ${what}`);
        await gate;
        await new Promise((resolve) => setTimeout(resolve, 5));
        log.push(`end ${what}`);
        return { ok: true, httpStatus: 200 };
      },
      close: () => {},
    };
    // One scope may hold all 8 slots here (VAULT_WEBHOOK_SCOPE_CONCURRENCY=8): this is about order, not shares.
    const v = vaultWith({ transport, scopeConcurrency: 8 });
    await createWebhook(v, { url: "https://127.0.0.1/a", events: ["*"] });
    await createWebhook(v, { url: "https://127.0.0.1/b", events: ["secret.read", "secret.burned"] });
    await expectStatus(v.asMaster("POST", "/secrets", { key: "k", value: "v", max_reads: 1 }), 201);
    await expectStatus(v.asMaster("GET", "/secrets/k"), 200);

    const first = v.webhooks.worker.tick();
    // While /a and /b have attempts in flight, a new event waits for them.
    await expectStatus(v.asMaster("POST", "/secrets", { key: "later", value: "v" }), 201);
    expect(await v.webhooks.worker.tick()).toBe(0);
    open();
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
    expect(await countRows(v, "webhook_deliveries")).toBe(0);
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
      { event_id: eventId, type: "secret.created", attempt: 3, status: "delivered", http_status: 200, error: null, at: START_SECONDS + 3, next_attempt_at: null },
      { event_id: eventId, type: "secret.created", attempt: 2, status: "retrying", http_status: 503, error: "HTTP 503", at: START_SECONDS + 1, next_attempt_at: null },
      { event_id: eventId, type: "secret.created", attempt: 1, status: "retrying", http_status: 500, error: "HTTP 500", at: START_SECONDS, next_attempt_at: null },
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
    expect(await v.query("SELECT state FROM webhook_deliveries")).toEqual([{ state: "failed" }]);
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
    expect(await v.query("SELECT count(*) AS n FROM webhook_deliveries WHERE webhook_id = ? AND state = 'pending'", hook.id)).toEqual([{ n: 2 }]);

    await expectStatus(v.asMaster("DELETE", `/webhooks/${hook.id as string}`), 200);
    v.clock.advance(60_000);
    expect(await v.webhooks.worker.tick()).toBe(1);
    expect(r.requests.map((q) => q.path)).toEqual(["/hook", "/keep"]);
    expect(await v.query("SELECT count(*) AS n FROM webhook_deliveries WHERE webhook_id = ?", hook.id)).toEqual([{ n: 0 }]);
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
