import { describe, expect, it } from "vitest";
import { createKey } from "../support/helpers.js";
import { createOrg, expectStatus } from "../support/org-helpers.js";
import { createWebhook, newReceiver, sign, useWebhookFixtures, vaultWith } from "../support/webhook-helpers.js";

// POST .../webhooks/:id/test (docs/webhooks.md "Test events"), on both engines.

useWebhookFixtures();

describe("webhook test events", () => {
  it("queues a signed webhook.test event for that webhook only, whatever it subscribes to, and audits it", async () => {
    const v = vaultWith();
    const r = await newReceiver();
    const other = await newReceiver();
    const hook = await createWebhook(v, { url: r.url, events: ["secret.burned"] });
    await createWebhook(v, { url: other.url, events: ["*"] });
    const res = await v.asMaster("POST", `/webhooks/${hook.id}/test`);
    expect(res.status).toBe(202);
    const { event_id } = (await res.json()) as { event_id: string };
    expect(event_id).toMatch(/^evt_/);
    expect(await v.webhooks.worker.tick()).toBe(1);
    expect(other.requests).toHaveLength(0);
    expect(r.requests).toHaveLength(1);
    const req = r.requests[0];
    const body = JSON.parse(req?.body ?? "{}") as { id: string; type: string; data: { webhook_id: string } };
    expect(body).toMatchObject({ id: event_id, type: "webhook.test", data: { webhook_id: hook.id } });
    expect(req?.headers["x-vault-event"]).toBe("webhook.test");
    expect(req?.headers["x-vault-signature"]).toBe(sign(req?.body ?? ""));
    const deliveries = (await (await v.asMaster("GET", `/webhooks/${hook.id}/deliveries`)).json()) as { deliveries: Array<{ type: string; status: string }> };
    expect(deliveries.deliveries[0]).toMatchObject({ type: "webhook.test", status: "delivered" });
    const audit = (await (await v.asMaster("GET", "/audit?action=webhook.tested")).json()) as { entries: Array<{ key: string }> };
    expect(audit.entries.map((e) => e.key)).toEqual([hook.id]);
  });

  it("is 404 for an unknown webhook or another scope's, and 403 without the permission", async () => {
    const v = vaultWith();
    const r = await newReceiver();
    const hook = await createWebhook(v, { url: r.url, events: ["*"] });
    await expectStatus(v.asMaster("POST", "/webhooks/wh_aaaaaaaaaaaaaaaaaaaaaaaaaa/test"), 404);
    const org = await createOrg(v, "acme");
    await expectStatus(v.asMaster("POST", `/orgs/${org}/webhooks/${hook.id}/test`), 404);
    const reader = await createKey(v, { permissions: ["read"] });
    await expectStatus(v.request("POST", `/webhooks/${hook.id}/test`, { token: reader.token }), 403);
    expect(await v.webhooks.worker.tick()).toBe(0);
  });
});
