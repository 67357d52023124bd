
import { timingSafeEqual } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Transport } from "../../src/webhooks/transport.js";
import { MAX_RETRY_DELAY_MS, retryDelayMs } from "../../src/webhooks/retry.js";
import { version } from "../../src/version.js";
import { expectStatus } from "../support/org-helpers.js";
import { useWebhookFixtures, START_SECONDS, vaultWith, newReceiver, createWebhook, sign, countRows } from "../support/webhook-helpers.js";

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
    // Once /a and /b have attempts in flight (the claim committed: with PostgreSQL's group commit a
    // claim queued in the same turn as the POST below would run after it), a new event waits for them.
    await expect.poll(() => log.filter((l) => l.startsWith("start ")).length).toBe(2);
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
});
