import { afterAll, expect, it } from "vitest";
import { startVault } from "../../src/index.js";
import { createTestDatabase, describePg } from "../support/pg-database.js";
import type { TestDatabase } from "../support/pg-database.js";

// startVault on the PostgreSQL engine: the settings by name, as docs/embedding.md says.
const databases: TestDatabase[] = [];
afterAll(async () => {
  for (const db of databases.splice(0)) await db.drop();
});

describePg("startVault on PostgreSQL", () => {
  it("takes databaseUrl and the shared keys as settings; two vaults on one database share its secrets", async () => {
    const db = await createTestDatabase();
    databases.push(db);
    const settings = { databaseUrl: db.url, encryptionKey: Buffer.alloc(32, 7), webhookSecret: "embed-pg-webhook-secret-0123" };
    const a = await startVault({ masterKey: "embed-pg-master-key-0123", settings });
    const b = await startVault({ masterKey: "embed-pg-master-key-0123", settings });
    try {
      await a.client.put("shared/k", "v");
      expect((await b.client.get("shared/k")).value).toBe("v");
      // Without the shared keys a node is refused, as with the flags.
      await expect(startVault({ settings: { databaseUrl: db.url } })).rejects.toThrow(/must be set with VAULT_DATABASE_URL/);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});
