import { afterAll, describe, expect, it } from "vitest";
import { cleanupTemp, killChildren, startVault, tempDir } from "../support/e2e-helpers.js";

// Warnings a real start logs for settings that weaken it (docs/configuration.md).

describe("the start", () => {
  afterAll(async () => {
    await killChildren();
    cleanupTemp();
  });

  it("warns when VAULT_WEBHOOK_ALLOW_PRIVATE lets webhooks reach loopback and private addresses", async () => {
    for (const value of ["true", "1"]) {
      const open = await startVault(tempDir(), { env: { VAULT_WEBHOOK_ALLOW_PRIVATE: value } });
      await expect.poll(() => open.stdout() + open.stderr()).toMatch(/VAULT_WEBHOOK_ALLOW_PRIVATE is on: webhooks may target loopback, private/);
      await open.stop();
    }
    const closed = await startVault(tempDir(), { env: { VAULT_WEBHOOK_ALLOW_PRIVATE: "false", VAULT_LOG_LEVEL: "info" } });
    await expect.poll(() => closed.stdout() + closed.stderr()).toMatch(/listening/);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(closed.stdout() + closed.stderr()).not.toMatch(/VAULT_WEBHOOK_ALLOW_PRIVATE/);
  });
});
