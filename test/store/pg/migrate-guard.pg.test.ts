import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, afterEach, expect, it } from "vitest";
import { cleanupTemp, killChildren, runCommand, startVault, tempDir } from "../../support/e2e-helpers.js";
import { createTestDatabase, describePg } from "../../support/pg-database.js";
import type { TestDatabase } from "../../support/pg-database.js";

// What `migrate --from-sqlite` refuses before it copies anything: a data dir
// a running vault holds, and a SQLite file whose columns are not the schema's.

const databases: TestDatabase[] = [];

afterEach(async () => {
  await killChildren();
});

afterAll(async () => {
  for (const db of databases.splice(0)) await db.drop();
  cleanupTemp();
});

/** Rows of `table` in the target (0 when the copy never created it). */
async function rowsIn(url: string, table: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const exists = await client.query<{ t: string | null }>("SELECT to_regclass($1)::text AS t", [table]);
    if (exists.rows[0]?.t == null) return 0;
    const r = await client.query<{ n: number }>(`SELECT count(*)::integer AS n FROM "${table}"`);
    return r.rows[0]?.n ?? 0;
  } finally {
    await client.end();
  }
}

/** A SQLite vault with one secret, started and stopped by the real command. */
async function stoppedVault(): Promise<string> {
  const dir = tempDir("ev-migrate-guard-");
  const v = await startVault(dir);
  expect((await v.request("POST", "/secrets", { key: "k", value: "v" })).status).toBe(201);
  expect((await v.stop()).code).toBe(0);
  return dir;
}

describePg("migrate --from-sqlite refuses what it must not copy", () => {
  it("refuses (exit 2) while a vault serves the data dir, copying nothing; copies once it is stopped", async () => {
    const dir = tempDir("ev-migrate-guard-");
    const v = await startVault(dir);
    expect((await v.request("POST", "/secrets", { key: "one-read", value: "v", max_reads: 1 })).status).toBe(201);
    const target = await createTestDatabase();
    databases.push(target);

    const refused = runCommand(["migrate", "--from-sqlite", dir, "--to", target.url]);
    expect(refused.code, refused.stdout + refused.stderr).toBe(2);
    expect(refused.stderr).toMatch(/another ephemeral-vault is using the data dir .*stop it before running migrate/);
    expect(await rowsIn(target.url, "secrets")).toBe(0);

    // Still served by the vault that holds it, then stopped.
    expect((await v.request("GET", "/secrets/one-read")).status).toBe(200);
    expect((await v.stop()).code).toBe(0);
    const copied = runCommand(["migrate", "--from-sqlite", dir, "--to", target.url]);
    expect(copied.code, copied.stderr).toBe(0);
    expect(copied.stdout).toMatch(/every table's count matches/);
    // The burn that happened before the stop is in the copy: nothing active to serve again.
    const client = new pg.Client({ connectionString: target.url });
    await client.connect();
    try {
      const r = await client.query<{ n: number }>("SELECT count(*)::integer AS n FROM secrets WHERE key = 'one-read' AND state = 'active'");
      expect(r.rows[0]?.n).toBe(0);
    } finally {
      await client.end();
    }
  });

  it("refuses (exit 2) a SQLite file whose column names are not the schema's, and runs none of them as SQL", async () => {
    const dir = await stoppedVault();
    const file = new Database(join(dir, "vault.db"));
    file.exec(`ALTER TABLE secrets RENAME COLUMN updated_at TO "x""; DROP TABLE secrets; --"`);
    file.close();
    const target = await createTestDatabase();
    databases.push(target);

    const refused = runCommand(["migrate", "--from-sqlite", dir, "--to", target.url]);
    expect(refused.code, refused.stdout + refused.stderr).toBe(2);
    expect(refused.stderr).toMatch(/table secrets does not have the columns of this build's schema \(missing "updated_at"; unexpected "x\\"; DROP TABLE secrets; --"\)/);
    expect(await rowsIn(target.url, "secrets")).toBe(0);
  });
});
