import { createServer } from "node:https";
import type { Server } from "node:https";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { ScopeShares } from "../../src/webhooks/shares.js";
import type { DeliveryResult, Transport } from "../../src/webhooks/transport.js";
import { createOrg, expectStatus } from "../support/org-helpers.js";
import { cert, createWebhook, newReceiver, toClose, useWebhookFixtures, vaultWith } from "../support/webhook-helpers.js";

/**
 * One tenant's slow receivers must not set every tenant's delivery rate: each
 * scope gets at most its share of the worker's slots, and a scope whose
 * attempts time out gets fewer (docs/webhooks.md "Delivery and retries").
 */

useWebhookFixtures();

/** An HTTPS receiver that takes every request and never answers it (each attempt ends at the worker's timeout). */
async function hangingReceiver(): Promise<{ url: string; requests: () => number; open: () => number }> {
  let requests = 0;
  let open = 0;
  const server: Server = createServer({ cert: cert.cert, key: cert.key }, (req) => {
    requests++;
    open++;
    req.socket.once("close", () => open--);
    req.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  toClose.push(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return { url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/hang`, requests: () => requests, open: () => open };
}

/** Resolves once `check()` holds, polling every 20 ms; rejects after `timeoutMs`. */
async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("delivery shares between scopes", () => {
  it("delivers org B's events promptly while org A's 25 webhooks hang until the timeout", async () => {
    // Attempts to A's receiver hang for the whole 3 s timeout.
    const v = vaultWith({ timeoutMs: 3000, maxAttempts: 2 });
    const orgA = await createOrg(v, "slow-a");
    const orgB = await createOrg(v, "fast-b");
    const hang = await hangingReceiver();
    const fast = await newReceiver();
    for (let i = 0; i < 25; i++) await createWebhook(v, { url: `${hang.url}?n=${i}`, events: ["secret.created"] }, `/orgs/${orgA}/webhooks`);
    await createWebhook(v, { url: fast.url, events: ["secret.created"] }, `/orgs/${orgB}/webhooks`);
    // 3 events of A: 75 deliveries, far more than the worker's slots.
    for (let i = 0; i < 3; i++) await expectStatus(v.asMaster("POST", `/orgs/${orgA}/secrets`, { key: `a${i}`, value: "v" }), 201);
    v.webhooks.worker.start();
    await until(() => hang.requests() >= 4, 5000, "A's first attempts");
    await new Promise((resolve) => setTimeout(resolve, 100));

    // B's single event.
    let t0 = Date.now();
    await expectStatus(v.asMaster("POST", `/orgs/${orgB}/secrets`, { key: "b-single", value: "v" }), 201);
    await fast.waitFor(1, 20_000);
    const single = Date.now() - t0;

    // A burst of 10.
    t0 = Date.now();
    for (let i = 0; i < 10; i++) await expectStatus(v.asMaster("POST", `/orgs/${orgB}/secrets`, { key: `b${i}`, value: "v" }), 201);
    await fast.waitFor(11, 30_000);
    const burst = Date.now() - t0;

    // A is still stuck (no attempt of it has answered), and B did not wait for A's timeouts.
    expect(hang.open()).toBeGreaterThan(0);
    expect(single).toBeLessThan(1500);
    expect(burst).toBeLessThan(2000);
  }, 30_000);
  it("shrinks the share of a scope whose attempts time out, and gives it back as its attempts get answers", async () => {
    // Each attempt waits until the test settles it.
    const waiting: ((result: DeliveryResult) => void)[] = [];
    const transport: Transport = {
      send: () => new Promise<DeliveryResult>((resolve) => waiting.push(resolve)),
      close: () => {},
    };
    const v = vaultWith({ transport, scopeConcurrency: 4 });
    const orgA = await createOrg(v, "slow-a");
    for (let i = 0; i < 10; i++) await createWebhook(v, { url: `https://127.0.0.1/a${i}`, events: ["secret.created"] }, `/orgs/${orgA}/webhooks`);
    for (let i = 0; i < 3; i++) await expectStatus(v.asMaster("POST", `/orgs/${orgA}/secrets`, { key: `a${i}`, value: "v" }), 201);

    /**
     * Runs one round, settling each of its attempts with `result` (those
     * waiting behind another of their webhook too); returns how many
     * deliveries the round claimed.
     */
    const round = async (result: DeliveryResult): Promise<number> => {
      let finished = false;
      const done = v.webhooks.worker.tick().finally(() => {
        finished = true;
      });
      while (!finished) {
        for (const settle of waiting.splice(0)) settle(result);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      return done;
    };
    const timeout: DeliveryResult = { ok: false, httpStatus: null, error: "timeout after 3000 ms", timedOut: true };
    const answer: DeliveryResult = { ok: false, httpStatus: 500, error: "HTTP 500" };

    // The whole share (4 of 8 slots), then after timeouts one slot, never less.
    expect(await round(timeout)).toBe(4);
    expect(await round(timeout)).toBe(1);
    expect(await round(timeout)).toBe(1);
    // Answers give the share back one step each.
    expect(await round(answer)).toBe(1);
    expect(await round(answer)).toBe(2);
    expect(await round(answer)).toBe(4);
  });
});

describe("ScopeShares", () => {
  it("holds each scope to its share of the slots", () => {
    const shares = new ScopeShares({ concurrency: 8, perScope: 4 });
    for (let i = 0; i < 4; i++) shares.started("a");
    expect(shares.room("a")).toBe(0);
    expect(shares.room("b")).toBe(4);
    expect(shares.limits().limits.get("a")).toBe(0);
    shares.finished("a", false);
    expect(shares.room("a")).toBe(1);
  });

  it("halves the share of a scope whose attempts time out, down to one, and gives it back as attempts answer", () => {
    const shares = new ScopeShares({ concurrency: 8, perScope: 4 });
    shares.started("a");
    shares.finished("a", true);
    expect(shares.room("a")).toBe(2);
    shares.started("a");
    shares.finished("a", true);
    expect(shares.room("a")).toBe(1);
    shares.started("a");
    shares.finished("a", true);
    expect(shares.room("a")).toBe(1);
    // Another scope keeps its whole share.
    expect(shares.room("b")).toBe(4);
    // Answers (any status, not a timeout) give the share back step by step.
    shares.started("a");
    shares.finished("a", false);
    expect(shares.room("a")).toBe(2);
    shares.started("a");
    shares.finished("a", false);
    expect(shares.room("a")).toBe(4);
  });

  it("lets the scopes that time out hold at most half the slots together", () => {
    const shares = new ScopeShares({ concurrency: 8, perScope: 4 });
    const slow = ["a", "b", "c", "d", "e", "f"];
    for (const scope of slow) {
      shares.started(scope);
      shares.finished(scope, true);
    }
    let held = 0;
    for (const scope of slow) {
      while (shares.room(scope) > 0) {
        shares.started(scope);
        held++;
      }
    }
    expect(held).toBe(4);
    // A healthy scope still finds its share.
    expect(shares.room("healthy")).toBe(4);
    // A slow scope that got nothing is left out of the next claim.
    expect(shares.limits().limits.get("f")).toBe(0);
  });

  it("refuses a share below one", () => {
    expect(() => new ScopeShares({ concurrency: 8, perScope: 0 })).toThrow(RangeError);
  });
});
