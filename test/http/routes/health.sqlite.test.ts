import { copyFileSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect } from "vitest";
import { cleanupTemp, killChildren, startVault, tempDir } from "../../support/e2e-helpers.js";
import { buildSqliteTestVault, itSqlite } from "../../support/helpers.js";

afterEach(killChildren);
afterAll(cleanupTemp);

describe("/health checks the write path", () => {
  itSqlite("answers 503 while commits fail (a full disk) and 200 again once they succeed", async () => {
    const v = buildSqliteTestVault();
    let diskFull = false;
    v.sqlite.tx.onBeforeCommit(() => {
      if (diskFull) throw new Error("SQLITE_FULL: database or disk is full");
    });
    const health = async () => {
      const res = await v.request("GET", "/health", { token: null });
      return { status: res.status, body: await res.json() };
    };
    expect(await health()).toEqual({ status: 200, body: { status: "ok" } });

    diskFull = true;
    v.clock.advance(1000);
    expect(await health()).toEqual({ status: 503, body: { status: "unavailable" } });
    // A failure is not cached: every call checks again.
    expect((await health()).status).toBe(503);
    expect((await v.asMaster("POST", "/secrets", { key: "k", value: "v" })).status).toBe(500);

    diskFull = false;
    expect(await health()).toEqual({ status: 200, body: { status: "ok" } });
    expect((await v.asMaster("POST", "/secrets", { key: "k", value: "v" })).status).toBe(201);
  });

  itSqlite("writes its check through the group commit (the meta row health_checked_at)", async () => {
    const v = buildSqliteTestVault();
    expect((await v.request("GET", "/health", { token: null })).status).toBe(200);
    const row = v.db.prepare("SELECT value FROM meta WHERE name = 'health_checked_at'").get() as { value: string } | undefined;
    expect(row?.value).toBe(String(v.clock.now()));
  });
});

describe("a database file deleted or replaced under the running vault", () => {
  /** Polls /health until it answers `status` (the file is checked at most once a second). */
  async function healthBecomes(url: string, status: number): Promise<void> {
    for (let i = 0; i < 40; i++) {
      if ((await fetch(`${url}/health`)).status === status) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`/health never answered ${status}`);
  }

  // SQLite only (here and below): the file under the data dir; a PostgreSQL node keeps nothing there.
  itSqlite("deleted: /health answers 503 and writes are refused with 503, never acknowledged", async () => {
    const dir = tempDir();
    const vault = await startVault(dir);
    expect((await vault.request("POST", "/secrets", { key: "before", value: "v" })).status).toBe(201);
    for (const f of ["vault.db", "vault.db-wal", "vault.db-shm"]) rmSync(join(dir, f), { force: true });
    await healthBecomes(vault.url, 503);
    expect(await (await fetch(`${vault.url}/health`)).json()).toEqual({ status: "unavailable" });
    const write = await vault.request("POST", "/secrets", { key: "after", value: "v" });
    expect(write.status).toBe(503);
    expect(((await write.json()) as { error: string }).error).toMatch(/deleted or replaced/);
  });

  itSqlite("replaced (a copy renamed over it): /health answers 503 and writes are refused", async () => {
    const dir = tempDir();
    const vault = await startVault(dir);
    expect((await vault.request("POST", "/secrets", { key: "before", value: "v" })).status).toBe(201);
    copyFileSync(join(dir, "vault.db"), join(dir, "copy.db"));
    renameSync(join(dir, "copy.db"), join(dir, "vault.db"));
    await healthBecomes(vault.url, 503);
    expect((await vault.request("POST", "/secrets", { key: "after", value: "v" })).status).toBe(503);
  });
});
