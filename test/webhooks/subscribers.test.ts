import { describe, expect, it } from "vitest";
import { SYSTEM_ORIGIN } from "../../src/domain/events.js";
import { GLOBAL_SCOPE } from "../../src/domain/secrets/model.js";
import { buildTestVault } from "../support/helpers.js";
import type { TestVault } from "../support/helpers.js";

const hook = { orgId: null, url: "https://hooks.example/in", events: ["*"], description: null, keyPrefix: null };

/** Rows in a table, read on either engine. */
async function count(v: TestVault, table: "webhook_deliveries" | "webhooks"): Promise<number> {
  return (await v.query(`SELECT count(*) AS n FROM ${table}`))[0]?.n as number;
}

function createSecret(v: TestVault, key: string): Promise<unknown> {
  return v.tx.run((w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key, value: "v" }, SYSTEM_ORIGIN));
}

describe("the outbox's subscriber cache", () => {
  it("sees a webhook created after events of its scope were queued to nobody", async () => {
    const v = buildTestVault();
    await createSecret(v, "before");
    expect(await count(v, "webhook_deliveries")).toBe(0);
    await v.tx.run((w) => v.webhooks.registry.create(w, hook, SYSTEM_ORIGIN));
    await createSecret(v, "after");
    expect(await count(v, "webhook_deliveries")).toBe(1);
  });

  it("stops queueing for a deleted webhook", async () => {
    const v = buildTestVault();
    const created = (await v.tx.run((w) => v.webhooks.registry.create(w, hook, SYSTEM_ORIGIN))).webhook;
    await createSecret(v, "one");
    await v.tx.run((w) => v.webhooks.registry.remove(w, { orgId: null, viewerPrefix: null }, created.id, SYSTEM_ORIGIN));
    await createSecret(v, "two");
    expect(await count(v, "webhook_deliveries")).toBe(0);
  });

  it("forgets a webhook whose creation was rolled back", async () => {
    const v = buildTestVault();
    await createSecret(v, "warm");
    const failed = v.tx.run(async (w) => {
      await v.webhooks.registry.create(w, hook, SYSTEM_ORIGIN);
      // The request's own events see the new webhook inside its transaction...
      await v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "inside", value: "v" }, SYSTEM_ORIGIN);
      throw new Error("rolled back");
    });
    await expect(failed).rejects.toThrow("rolled back");
    // ...but once it rolled back, no later event is queued for it.
    await createSecret(v, "later");
    expect(await count(v, "webhook_deliveries")).toBe(0);
    expect(await count(v, "webhooks")).toBe(0);
  });
});
