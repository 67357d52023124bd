import { describe, expect, it } from "vitest";
import { DeliveryQueue } from "../../src/webhooks/outbox.js";
import type { DueDelivery } from "../../src/webhooks/outbox.js";
import { CLAIM_LEASE_MS } from "../../src/store/pg/outbox.js";
import { TEST_ENGINE } from "../support/helpers.js";
import type { TestVault } from "../support/helpers.js";
import { createOrg, expectStatus } from "../support/org-helpers.js";
import { createWebhook, useWebhookFixtures, vaultWith } from "../support/webhook-helpers.js";

useWebhookFixtures();

/** Queues `count` secret.created events in `scope` (a global webhook or an org's), keys `${name}0`, `${name}1`... */
async function queue(v: TestVault, orgId: string | null, name: string, count: number): Promise<void> {
  const base = orgId === null ? "" : `/orgs/${orgId}`;
  await createWebhook(v, { url: `https://127.0.0.1/${name}`, events: ["secret.created"] }, `${base}/webhooks`);
  for (let i = 0; i < count; i++) await expectStatus(v.asMaster("POST", `${base}/secrets`, { key: `${name}${i}`, value: "v" }), 201);
}

/** The secret keys of claimed deliveries, in the order claimed. */
const keys = (list: DueDelivery[]): string[] => list.map((d) => (JSON.parse(d.body) as { data: { key: string } }).data.key);

describe("DeliveryQueue.due", () => {
  it("shares the slots round-robin between scopes, oldest first, each call starting after the previous one's first scope", async () => {
    const v = vaultWith();
    const acme = await createOrg(v, "acme");
    const globex = await createOrg(v, "globex");
    await queue(v, null, "g", 3);
    await queue(v, acme, "a", 5);
    await queue(v, globex, "b", 1);
    // Scopes in a fixed order: global first, then the orgs by id.
    const [first, second] = [acme, globex].sort().map((id) => (id === acme ? "a" : "b"));
    const q = new DeliveryQueue();
    const now = v.clock.now();

    const one = await v.tx.run((w) => q.due(w, now, 4, new Set()));
    expect(keys(one)).toEqual(["g0", `${first}0`, `${second}0`, "g1"]);
    if (TEST_ENGINE === "pg") {
      // Only what due() returned is leased: nothing claimed is left unsent.
      const leased = await v.query("SELECT count(*) AS n FROM webhook_deliveries WHERE leased_until IS NOT NULL");
      expect(leased[0]?.n).toBe(4);
    }

    // Past the leases (PostgreSQL); the next call starts with the scope after global.
    const later = now + CLAIM_LEASE_MS + 1;
    const two = await v.tx.run((w) => q.due(w, later, 4, new Set()));
    expect(keys(two)).toEqual([`${first}0`, `${second}0`, "g0", "a1"]);

    // Per-scope limits: acme left out, global held to one; the rest goes to globex.
    const three = await v.tx.run((w) => q.due(w, later + CLAIM_LEASE_MS + 1, 8, new Set(), { scopeLimit: 8, limits: new Map([[acme, 0], ["global", 1]]) }));
    expect(keys(three).sort()).toEqual(["b0", "g0"]);
  });

  it("leaves out busy webhooks and scopes with nothing due", async () => {
    const v = vaultWith();
    const acme = await createOrg(v, "acme");
    await queue(v, null, "g", 2);
    await queue(v, acme, "a", 2);
    const q = new DeliveryQueue();
    const [global] = await v.tx.run((w) => q.due(w, v.clock.now(), 1, new Set()));
    expect(global?.scope).toBe("global");
    const rest = await v.tx.run((w) => q.due(w, v.clock.now() + CLAIM_LEASE_MS + 1, 8, new Set([global?.webhookId ?? ""])));
    expect(keys(rest)).toEqual(["a0", "a1"]);
    expect(await v.tx.run((w) => q.due(w, v.clock.now() - 1, 8, new Set()))).toEqual([]);
  });
});

describe("DeliveryQueue.due within a scope", () => {
  it("claims the scope's oldest due delivery first, whichever webhook it belongs to", async () => {
    const v = vaultWith();
    await expectStatus(v.asMaster("POST", "/secrets", { key: "old", value: "v", max_reads: 5 }), 201);
    const created = await createWebhook(v, { url: "https://127.0.0.1/created", events: ["secret.created"] });
    const read = await createWebhook(v, { url: "https://127.0.0.1/read", events: ["secret.read"] });
    // The webhook with the larger id gets the older delivery.
    const emitCreated = () => expectStatus(v.asMaster("POST", "/secrets", { key: "new", value: "v" }), 201);
    const emitRead = () => expectStatus(v.asMaster("GET", "/secrets/old"), 200);
    const createdIsHigh = String(created.id) > String(read.id);
    for (const emit of createdIsHigh ? [emitCreated, emitRead] : [emitRead, emitCreated]) await emit();
    const q = new DeliveryQueue();
    const picked = await v.tx.run((w) => q.due(w, v.clock.now(), 1, new Set(), { scopeLimit: 1, limits: new Map() }));
    expect(picked.map((d) => d.webhookId)).toEqual([createdIsHigh ? created.id : read.id]);
  });
});
