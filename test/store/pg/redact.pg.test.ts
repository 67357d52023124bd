import { afterAll, afterEach, expect, it } from "vitest";
import { cleanupTemp, killChildren, runCommand, startVault, tempDir } from "../../support/e2e-helpers.js";
import { createTestDatabase, describePg } from "../../support/pg-database.js";
import type { TestDatabase } from "../../support/pg-database.js";

// The database password never reaches the start log, a refused start's error
// or `audit verify`'s output, whichever form the connection string gives it in.

const KEYS = {
  VAULT_ENCRYPTION_KEY: "44".repeat(32),
  VAULT_WEBHOOK_SECRET: "pg-redact-webhook-secret-0123456789",
};
const WRONG = "wrong-pass-4f1c9e";
const databases: TestDatabase[] = [];

afterEach(async () => {
  await killChildren();
});

afterAll(async () => {
  for (const db of databases.splice(0)) await db.drop();
  cleanupTemp();
});

/** The forms of one connection string, each with the password it carries. */
function forms(url: string, password: string): { form: string; url: string }[] {
  const u = new URL(url);
  const bare = `postgres://${u.username}@${u.host}${u.pathname}`;
  return [
    { form: "user:password@", url: `postgres://${u.username}:${encodeURIComponent(password)}@${u.host}${u.pathname}?sslmode=disable` },
    { form: "?password=", url: `${bare}?password=${encodeURIComponent(password)}&sslmode=disable` },
    // node-postgres ignores this one: the node has no password, and SCRAM fails on the client side.
    { form: "?PGPASSWORD=", url: `${bare}?PGPASSWORD=${encodeURIComponent(password)}` },
    { form: "key/value password=", url: `host=${u.hostname} port=${u.port} user=${u.username} password=${password} dbname=${u.pathname.slice(1)}` },
    { form: "key/value password='...'", url: `host=${u.hostname} port=${u.port} password='${password}' dbname=${u.pathname.slice(1)}` },
  ];
}

describePg("the database password in logs and errors", () => {
  it("is not in the start log of a node started with it as user:password@ or ?password=", async () => {
    const db = await createTestDatabase();
    databases.push(db);
    const password = decodeURIComponent(new URL(db.url).password);
    for (const { form, url } of forms(db.url, password).slice(0, 2)) {
      const v = await startVault(tempDir("ev-pg-redact-"), { env: { ...KEYS, VAULT_DATABASE_URL: url, VAULT_LOG_LEVEL: "info" }, timeoutMs: 30_000 });
      // The log line is on stdout, read asynchronously: wait for it before stopping.
      for (let i = 0; i < 100 && !v.stdout().includes("ephemeral-vault listening"); i++) await new Promise((r) => setTimeout(r, 50));
      await v.stop();
      const output = v.stdout() + v.stderr();
      expect(output, form).toMatch(/ephemeral-vault listening/);
      expect(output, form).toContain("***");
      expect(output, form).not.toContain(password);
      expect(output, form).not.toContain(encodeURIComponent(password));
    }
  });

  it("is not in the error of a refused start (exit 2), in any form", async () => {
    const db = await createTestDatabase();
    databases.push(db);
    for (const { form, url } of forms(db.url, WRONG)) {
      const err = await startVault(tempDir("ev-pg-redact-"), { env: { ...KEYS, VAULT_DATABASE_URL: url }, timeoutMs: 30_000 }).then(
        () => undefined,
        (e: unknown) => e as { code: number; stderr: string },
      );
      expect(err?.code, form).toBe(2);
      expect(err?.stderr, form).toMatch(/VAULT_DATABASE_URL/);
      expect(err?.stderr, form).not.toContain(WRONG);
    }
  });

  it("is not in audit verify --database-url's error, in any form", async () => {
    const db = await createTestDatabase();
    databases.push(db);
    for (const { form, url } of forms(db.url, WRONG)) {
      const r = runCommand(["audit", "verify", "--database-url", url], { VAULT_ENCRYPTION_KEY: KEYS.VAULT_ENCRYPTION_KEY });
      expect(r.code, `${form}: ${r.stderr}`).toBe(2);
      expect(r.stderr, form).toMatch(/--database-url/);
      expect(r.stdout + r.stderr, form).not.toContain(WRONG);
    }
  });
});
