import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { auditCommand } from "../../../../src/cli/admin/audit.js";
import { EXIT_CHAIN_BROKEN, EXIT_KEY_MISSING } from "../../../../src/cli/exit-codes.js";
import { rootKeyId, ValueCipher } from "../../../../src/crypto/cipher.js";
import { openDatabase } from "../../../../src/store/sqlite/db.js";
import { createLogger } from "../../../../src/log/log.js";
import { rekeyDatabase } from "../../../../src/store/sqlite/tools/rekey.js";
import { createSqliteVault } from "../../../support/helpers.js";

// `audit verify` after a rotation, without the previous root key: a missing key
// is not a broken chain (docs/audit.md "Exit codes").

const OLD = Buffer.alloc(32, 1);
const NEW = Buffer.alloc(32, 2);
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A data dir whose audit log has a segment under OLD, then (after rekey) one under NEW. */
async function rotatedDataDir(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "ev-audit-key-"));
  dirs.push(dir);
  const db = openDatabase(join(dir, "vault.db"));
  const origin = { actor: null, principalId: null, ip: null };
  const options = { db, log: createLogger("silent"), masterKey: "m".repeat(32), now: Date.now, activeLimit: () => null, publicUrl: "http://v.test", maxValueBytes: 65_536, trustProxy: false };
  const before = createSqliteVault(db, { ...options, cipher: new ValueCipher(OLD) });
  await before.tx.run((w) => before.secrets.create(w, { scope: "global", key: "a", value: "v" }, origin));
  expect(rekeyDatabase(db, new ValueCipher(NEW, [OLD])).remaining).toBe(0);
  const after = createSqliteVault(db, { ...options, cipher: new ValueCipher(NEW) });
  await after.tx.run((w) => after.secrets.create(w, { scope: "global", key: "b", value: "v" }, origin));
  after.engine.tx.close();
  db.close();
  return dir;
}

async function verify(dir: string, env: Record<string, string>): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await auditCommand(["verify", "--data-dir", dir], env, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

describe("audit verify without a previous root key", () => {
  it("exits EXIT_KEY_MISSING (3), naming the key id and VAULT_PREVIOUS_ENCRYPTION_KEYS, not 1 (broken)", async () => {
    const dir = await rotatedDataDir();
    const missing = await verify(dir, { VAULT_ENCRYPTION_KEY: NEW.toString("hex") });
    expect(EXIT_KEY_MISSING).toBe(3);
    expect(missing.code).toBe(EXIT_KEY_MISSING);
    expect(missing.out).not.toMatch(/broken/);
    expect(missing.out).toContain(rootKeyId(OLD));
    expect(missing.out).toContain("VAULT_PREVIOUS_ENCRYPTION_KEYS");

    const both = await verify(dir, { VAULT_ENCRYPTION_KEY: NEW.toString("hex"), VAULT_PREVIOUS_ENCRYPTION_KEYS: OLD.toString("hex") });
    expect(both.code).toBe(0);
    expect(both.out).toMatch(/^audit chain intact/);
  });

  it("names the current key's setting when the last segment's key is the one missing", async () => {
    const dir = await rotatedDataDir();
    const missing = await verify(dir, { VAULT_ENCRYPTION_KEY: OLD.toString("hex") });
    expect(missing.code).toBe(EXIT_KEY_MISSING);
    expect(missing.out).toContain(rootKeyId(NEW));
    expect(missing.out).toContain("VAULT_ENCRYPTION_KEY");
  });

  it("still exits 1 for a tampered row when every key is loaded", async () => {
    const dir = await rotatedDataDir();
    const db = openDatabase(join(dir, "vault.db"));
    db.exec("DROP TRIGGER IF EXISTS audit_no_update");
    db.prepare("UPDATE audit SET key = 'forged' WHERE id = 1").run();
    db.close();
    const broken = await verify(dir, { VAULT_ENCRYPTION_KEY: NEW.toString("hex"), VAULT_PREVIOUS_ENCRYPTION_KEYS: OLD.toString("hex") });
    expect(broken.code).toBe(EXIT_CHAIN_BROKEN);
    expect(broken.out).toMatch(/broken at row 1/);
  });
});
