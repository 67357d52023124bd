import { describe, expect, it } from "vitest";
import { SYSTEM_ORIGIN } from "../../src/domain/events.js";
import { eventPayload } from "../../src/webhooks/outbox.js";
import { createOrg, expectStatus } from "../support/org-helpers.js";
import { useWebhookFixtures, START_SECONDS, vaultWith, createWebhook, countRows, queuedRows } from "../support/webhook-helpers.js";

useWebhookFixtures();

describe("the outbox", () => {
  it("writes nothing when no webhook listens", async () => {
    const v = vaultWith();
    await expectStatus(v.asMaster("POST", "/secrets", { key: "a", value: "v" }), 201);
    await expectStatus(v.asMaster("GET", "/secrets/a"), 200);
    expect(await countRows(v, "webhook_events")).toBe(0);
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

    const rows = await queuedRows(v);
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
    const rows = await queuedRows(v);
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
    expect(await v.tx.run((w) => v.secrets.expireDue(w, 100, SYSTEM_ORIGIN))).toBe(1);
    const rows = await queuedRows(v);
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
