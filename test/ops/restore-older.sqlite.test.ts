import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { generateRootKey, ValueCipher } from "../../src/crypto/cipher.js";
import { createLogger } from "../../src/log/log.js";
import { backupDatabase } from "../../src/ops/backup.js";
import { restoreDatabase, RestoreRefused } from "../../src/ops/restore.js";
import { openDatabase } from "../../src/store/sqlite/db.js";
import { restoreCommand } from "../../src/cli/admin/restore.js";
import { createSqliteVault } from "../support/helpers.js";

// restore of an older authentic backup (docs/operations.md, "Backups"): a backup whose audit
// log lacks the vault's current head would bring revoked keys back; refused without --older.

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "ev-restore-older-"));
  dirs.push(dir);
  return dir;
}

const MASTER = "m".repeat(32);

/** Runs `steps` on a vault over `dir`/vault.db through the API, then closes it. */
async function withVault(dir: string, cipher: ValueCipher, steps: (request: (method: string, path: string, body?: unknown) => Promise<Response>) => Promise<void>): Promise<void> {
  const db = openDatabase(join(dir, "vault.db"));
  const vault = createSqliteVault(db, { cipher, log: createLogger("silent"), masterKey: MASTER, now: Date.now, activeLimit: () => null, publicUrl: "http://v.test", maxValueBytes: 65_536, trustProxy: false });
  const request = (method: string, path: string, body?: unknown) =>
    Promise.resolve(
      vault.app.request(path, {
        method,
        headers: { authorization: `Bearer ${MASTER}`, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    );
  try {
    await steps(request);
  } finally {
    await vault.engine.tx.close();
    db.close();
  }
}

describe("restore of an older backup", () => {
  it("is refused without --older (it would bring a revoked key back); a backup at or past the vault's head is not", async () => {
    const key = generateRootKey();
    const cipher = new ValueCipher(key);
    const dir = tempDir();
    let keyId = "";
    await withVault(dir, cipher, async (request) => {
      const made = await request("POST", "/keys", { name: "deploy", permissions: ["read"] });
      expect(made.status).toBe(201);
      keyId = ((await made.json()) as { id: string }).id;
    });
    const older = join(tempDir(), "older.db");
    await backupDatabase(join(dir, "vault.db"), older, cipher);
    await withVault(dir, cipher, async (request) => {
      expect((await request("DELETE", `/keys/${keyId}`)).status).toBe(200);
    });
    const current = join(tempDir(), "current.db");
    await backupDatabase(join(dir, "vault.db"), current, cipher);

    await expect(restoreDatabase(older, dir, cipher)).rejects.toThrow(RestoreRefused);
    await expect(restoreDatabase(older, dir, cipher)).rejects.toThrow(/older than the vault.*--older/);
    // The CLI: exit 1, nothing replaced; the revoked key stays revoked.
    const env = { VAULT_ENCRYPTION_KEY: key.toString("hex") };
    let err = "";
    const out = { out: () => undefined, err: (t: string) => (err += t) };
    expect(await restoreCommand([older, "--data-dir", dir], env, out)).toBe(1);
    expect(err).toMatch(/--older/);
    // A backup of the current state restores (same head).
    const code = await restoreCommand([current, "--data-dir", dir], env, out);
    expect(code, err).toBe(0);
    await withVault(dir, cipher, async (request) => {
      const listed = (await (await request("GET", "/keys")).json()) as { keys: Array<{ id: string }> };
      expect(listed.keys.map((k) => k.id)).not.toContain(keyId);
    });
    // --older goes back on purpose.
    err = "";
    // The kept copy is named by the second (vault.db.before-restore-<stamp>): a second restore in the same second would collide.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const back = await restoreCommand([older, "--data-dir", dir, "--older"], env, out);
    expect(back, err).toBe(0);
    // Only then is the revoked key back.
    await withVault(dir, cipher, async (request) => {
      const listed = (await (await request("GET", "/keys")).json()) as { keys: Array<{ id: string }> };
      expect(listed.keys.map((k) => k.id)).toContain(keyId);
    });
  });
});
