import { afterEach, describe, expect, it } from "vitest";
import type { Lookup } from "../../src/webhooks/address-guard.js";
import type { WebhookSettings } from "../../src/webhooks/index.js";
import type { DeliveryResult, Transport } from "../../src/webhooks/transport.js";
import { buildTestVault } from "../support/helpers.js";
import type { TestVault } from "../support/helpers.js";
import { createOrg, expectStatus } from "../support/org-helpers.js";

/**
 * Limits that keep one tenant from starving webhook delivery for all: a cap
 * on webhooks per scope, round-robin between scopes, and no retries for a
 * webhook whose deliveries keep failing.
 */

const noLookup: Lookup = () => Promise.reject(new Error("no DNS in tests"));
const toStop: TestVault[] = [];

afterEach(async () => {
  for (const v of toStop.splice(0)) await v.webhooks.worker.stop();
});

/** A transport that records the paths it was asked to post to and answers with `answer()`. */
function fakeTransport(answer: () => DeliveryResult = () => ({ ok: true, httpStatus: 200 })): Transport & { paths: string[] } {
  const paths: string[] = [];
  return {
    paths,
    send: (req) => {
      paths.push(new URL(req.url).pathname);
      return Promise.resolve(answer());
    },
    close: () => {},
  };
}

function vaultWith(settings: WebhookSettings): TestVault {
  const v = buildTestVault({
    webhooks: { allowPrivate: true, lookup: noLookup, random: () => 0.5, retryBaseMs: 1000, maxAttempts: 3, ...settings },
  });
  toStop.push(v);
  return v;
}

describe("webhooks per scope", () => {
  it("refuses one more than VAULT_WEBHOOKS_PER_SCOPE in a scope with 409, counting each org apart", async () => {
    const v = vaultWith({ perScope: 3, transport: fakeTransport() });
    const orgId = await createOrg(v);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await expectStatus(v.asMaster("POST", "/webhooks", { url: `https://127.0.0.1/g${i}`, events: ["*"] }), 201)).id as string);
    }
    const refused = await expectStatus(v.asMaster("POST", "/webhooks", { url: "https://127.0.0.1/g3", events: ["*"] }), 409);
    expect(refused.error).toMatch(/at most 3 webhooks/);
    expect((await expectStatus(v.asMaster("GET", "/webhooks"), 200)).webhooks).toHaveLength(3);

    // An org has its own allowance.
    for (let i = 0; i < 3; i++) {
      await expectStatus(v.asMaster("POST", `/orgs/${orgId}/webhooks`, { url: `https://127.0.0.1/o${i}`, events: ["*"] }), 201);
    }
    await expectStatus(v.asMaster("POST", `/orgs/${orgId}/webhooks`, { url: "https://127.0.0.1/o3", events: ["*"] }), 409);

    // Deleting one makes room again.
    await expectStatus(v.asMaster("DELETE", `/webhooks/${ids[0]}`), 200);
    await expectStatus(v.asMaster("POST", "/webhooks", { url: "https://127.0.0.1/g3", events: ["*"] }), 201);
  });
});

describe("delivery fairness between scopes", () => {
  it("gives an org's delivery a slot in the next round although another scope queued many before it", async () => {
    const transport = fakeTransport();
    // The global scope may hold all 8 slots (VAULT_WEBHOOK_SCOPE_CONCURRENCY=8): the round-robin alone gives the org its turn.
    const v = vaultWith({ perScope: 100, transport, scopeConcurrency: 8 });
    const orgId = await createOrg(v);
    for (let i = 0; i < 20; i++) {
      await expectStatus(v.asMaster("POST", "/webhooks", { url: `https://127.0.0.1/global-${i}`, events: ["*"] }), 201);
    }
    await expectStatus(v.asMaster("POST", `/orgs/${orgId}/webhooks`, { url: "https://127.0.0.1/org", events: ["*"] }), 201);
    // 20 global deliveries queued first, then 1 for the org.
    await expectStatus(v.asMaster("POST", "/secrets", { key: "g", value: "v" }), 201);
    v.clock.advance(1000);
    await expectStatus(v.asMaster("POST", `/orgs/${orgId}/secrets`, { key: "o", value: "v" }), 201);

    // One round has 8 slots (the worker's concurrency): the org gets one of them.
    expect(await v.webhooks.worker.tick()).toBe(8);
    expect(transport.paths).toContain("/org");
    expect(transport.paths.filter((p) => p.startsWith("/global-"))).toHaveLength(7);
  });
});

describe("a webhook whose deliveries keep failing", () => {
  it("is marked failing after VAULT_WEBHOOK_FAILING_AFTER failed deliveries: no more retries, shown in the deliveries log, cleared by a success", async () => {
    let up = false;
    const transport = fakeTransport(() => (up ? { ok: true, httpStatus: 200 } : { ok: false, httpStatus: 500, error: "HTTP 500" }));
    const v = vaultWith({ perScope: 25, failingAfter: 2, transport });
    const id = (await expectStatus(v.asMaster("POST", "/webhooks", { url: "https://127.0.0.1/down", events: ["secret.created"] }), 201)).id as string;

    /** Runs rounds, moving the clock past every retry, until nothing is due. */
    const drain = async () => {
      for (let i = 0; i < 20; i++) {
        await v.webhooks.worker.tick();
        v.clock.advance(60 * 60 * 1000);
      }
    };
    const deliveries = async () =>
      (await expectStatus(v.asMaster("GET", `/webhooks/${id}/deliveries`), 200)).deliveries as { status: string; attempt: number; error: string | null }[];

    // Two deliveries, each failing all 3 attempts.
    await expectStatus(v.asMaster("POST", "/secrets", { key: "a", value: "v" }), 201);
    await drain();
    await expectStatus(v.asMaster("POST", "/secrets", { key: "b", value: "v" }), 201);
    await drain();
    expect(transport.paths).toHaveLength(6);

    // Now failing: the next delivery gets one attempt, logged as failed and not retried.
    await expectStatus(v.asMaster("POST", "/secrets", { key: "c", value: "v" }), 201);
    await drain();
    expect(transport.paths).toHaveLength(7);
    const newest = (await deliveries())[0];
    expect(newest).toMatchObject({ status: "failed", attempt: 1 });
    expect(newest?.error).toMatch(/webhook failing: not retried/);

    // A delivered attempt clears it: failures are retried again afterwards.
    up = true;
    await expectStatus(v.asMaster("POST", "/secrets", { key: "d", value: "v" }), 201);
    await drain();
    expect((await deliveries())[0]).toMatchObject({ status: "delivered", attempt: 1 });
    up = false;
    await expectStatus(v.asMaster("POST", "/secrets", { key: "e", value: "v" }), 201);
    await v.webhooks.worker.tick();
    expect((await deliveries())[0]).toMatchObject({ status: "retrying", attempt: 1 });
  });
});
