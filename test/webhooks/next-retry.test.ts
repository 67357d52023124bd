import { describe, expect, it } from "vitest";
import { MASTER_KEY } from "../support/helpers.js";
import { createOrg, expectStatus } from "../support/org-helpers.js";
import { START_SECONDS, createWebhook, newReceiver, useWebhookFixtures, vaultWith } from "../support/webhook-helpers.js";

useWebhookFixtures();

/** The (attempt, status, next_attempt_at) of each listed delivery attempt, newest first. */
function entries(list: Record<string, unknown>): [unknown, unknown, unknown][] {
  return (list.deliveries as Record<string, unknown>[]).map((d) => [d.attempt, d.status, d.next_attempt_at]);
}

describe("next_attempt_at in GET .../deliveries (docs/webhooks.md)", () => {
  it("gives the scheduled retry (Unix seconds) on the latest attempt of a pending delivery, null once it succeeds", async () => {
    // random 0.5: no jitter; attempt 2 waits base, attempt 3 waits 2 * base.
    const v = vaultWith({ retryBaseMs: 10_000, maxAttempts: 5 });
    const r = await newReceiver();
    r.respond([500, 503], 200);
    const hook = await createWebhook(v, { url: r.url, events: ["secret.created"] });
    const path = `/webhooks/${hook.id as string}/deliveries`;
    await expectStatus(v.asMaster("POST", "/secrets", { key: "a", value: "1" }), 201);

    expect(await v.webhooks.worker.tick()).toBe(1);
    expect(entries(await expectStatus(v.asMaster("GET", path), 200))).toEqual([[1, "retrying", START_SECONDS + 10]]);

    v.clock.advance(10_000);
    expect(await v.webhooks.worker.tick()).toBe(1);
    // Only the latest attempt carries the retry time.
    expect(entries(await expectStatus(v.asMaster("GET", path), 200))).toEqual([
      [2, "retrying", START_SECONDS + 30],
      [1, "retrying", null],
    ]);

    v.clock.advance(20_000);
    expect(await v.webhooks.worker.tick()).toBe(1);
    expect(entries(await expectStatus(v.asMaster("GET", path), 200))).toEqual([
      [3, "delivered", null],
      [2, "retrying", null],
      [1, "retrying", null],
    ]);
  });

  it("is null on every attempt once the last attempt failed, on an org's webhook too", async () => {
    const v = vaultWith({ retryBaseMs: 1000, maxAttempts: 2 });
    const r = await newReceiver();
    r.respond([], 500);
    const orgId = await createOrg(v);
    const hook = await createWebhook(v, { url: r.url, events: ["secret.created"] }, `/orgs/${orgId}/webhooks`);
    const path = `/orgs/${orgId}/webhooks/${hook.id as string}/deliveries`;
    await expectStatus(v.asMaster("POST", `/orgs/${orgId}/secrets`, { key: "k", value: "v" }), 201);

    expect(await v.webhooks.worker.tick()).toBe(1);
    expect(entries(await expectStatus(v.asMaster("GET", path), 200))).toEqual([[1, "retrying", START_SECONDS + 1]]);

    v.clock.advance(1000);
    expect(await v.webhooks.worker.tick()).toBe(1);
    expect(entries(await expectStatus(v.asMaster("GET", path), 200))).toEqual([
      [2, "failed", null],
      [1, "retrying", null],
    ]);
  });
});

describe("the console's webhooks page (docs/console.md)", () => {
  it("shows each delivery attempt's next retry as a UTC time, or a dash", async () => {
    const v = vaultWith({ retryBaseMs: 10_000, maxAttempts: 5 });
    const r = await newReceiver();
    r.respond([500], 200);
    await createWebhook(v, { url: r.url, events: ["secret.created"] });
    await expectStatus(v.asMaster("POST", "/secrets", { key: "a", value: "1" }), 201);
    expect(await v.webhooks.worker.tick()).toBe(1);

    const login = await v.app.request("/ui/login", {
      method: "POST",
      headers: { origin: "http://vault.test", "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: MASTER_KEY }).toString(),
    });
    expect(login.status).toBe(303);
    const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    const page = async (): Promise<string> => {
      const res = await v.app.request("/ui/webhooks", { headers: { cookie } });
      expect(res.status).toBe(200);
      return (await res.text()).replace(/\s+/g, " ");
    };
    const retryAt = new Date((START_SECONDS + 10) * 1000).toISOString().slice(0, 19).replace("T", " ");
    const pending = await page();
    expect(pending).toContain('<th scope="col">Next retry</th>');
    expect(pending).toMatch(
      new RegExp(`<td data-label="Status">retrying \\(HTTP 500\\): HTTP 500</td> ?<td data-label="Attempt">1</td> ?<td data-label="Next retry">${retryAt} UTC</td>`),
    );

    v.clock.advance(10_000);
    expect(await v.webhooks.worker.tick()).toBe(1);
    const done = await page();
    expect(done).toMatch(/<td data-label="Status">delivered \(HTTP 200\)<\/td> ?<td data-label="Attempt">2<\/td> ?<td data-label="Next retry">—<\/td>/);
    expect(done).toMatch(/<td data-label="Attempt">1<\/td> ?<td data-label="Next retry">—<\/td>/);
  });
});
