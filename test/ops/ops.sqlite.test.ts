import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config.js";
import { aadFor, aadForRecord, envelopeKeyId, generateRootKey, ValueCipher } from "../../src/crypto/cipher.js";
import { openDatabase } from "../../src/store/sqlite/db.js";
import type { Db } from "../../src/store/sqlite/db.js";
import { verifyRootKeys } from "../../src/store/sqlite/root-keys.js";
import { backupDatabase } from "../../src/ops/backup.js";
import { lockDataDir } from "../../src/store/tools.js";
import { rekeyDatabase } from "../../src/store/sqlite/tools/rekey.js";
import { restoreDatabase, RestoreRefused } from "../../src/ops/restore.js";
import { schemaSections } from "../../src/store/sqlite/migrate.js";
import { checkCopy } from "../../src/store/sqlite/tools/restore-checks.js";
import { createLogger } from "../../src/log/log.js";
import { buildSqliteTestVault, createSqliteVault } from "../support/helpers.js";

const MASTER = "m".repeat(32);

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "ev-ops-"));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

interface Stored {
  id: number;
  ciphertext: Buffer;
}

/**
 * Inserts a secret row the way the lifecycle does, with a value encrypted by `cipher` (a v3
 * envelope at value version 1); `legacy`: a v1 envelope in a row at value version 0, as a build
 * before value versions left it.
 */
function insertSecret(db: Db, cipher: ValueCipher, key: string, value: string, createdAt: number, legacy = false): void {
  const valueVersion = legacy ? 0 : 1;
  const ciphertext = legacy
    ? cipher.encrypt(value, aadFor("global", key))
    : cipher.encryptRecord(value, { scope: "global", key, createdAt, valueVersion });
  db.prepare(
    "INSERT INTO secrets (scope, key, state, ciphertext, created_at, updated_at, value_version) VALUES ('global', ?, 'active', ?, ?, ?, ?)",
  ).run(key, ciphertext, createdAt, createdAt, valueVersion);
}

function readAll(db: Db, cipher: ValueCipher): Record<string, string> {
  const rows = db.prepare("SELECT scope, key, created_at, value_version, ciphertext FROM secrets WHERE ciphertext IS NOT NULL").all() as {
    scope: string;
    key: string;
    created_at: number;
    value_version: number;
    ciphertext: Buffer;
  }[];
  const out: Record<string, string> = {};
  for (const r of rows) {
    out[r.key] = cipher.decryptRecord(r.ciphertext, { scope: r.scope, key: r.key, createdAt: r.created_at, valueVersion: r.value_version });
  }
  return out;
}

describe("AAD binds the row's creation time", () => {
  it("an older ciphertext of the same key copied into the recreated row answers 500, never the old value", async () => {
    const v = buildSqliteTestVault();
    expect((await v.asMaster("POST", "/secrets", { key: "db/password", value: "old-value-1" })).status).toBe(201);
    const old = v.db.prepare("SELECT ciphertext FROM secrets WHERE key = 'db/password'").get() as { ciphertext: Buffer };
    expect((await v.asMaster("DELETE", "/secrets/db/password")).status).toBe(200);
    v.clock.advance(1000);
    expect((await v.asMaster("POST", "/secrets", { key: "db/password", value: "new-value-2" })).status).toBe(201);
    v.db.prepare("UPDATE secrets SET ciphertext = ? WHERE key = 'db/password'").run(old.ciphertext);
    const res = await v.asMaster("GET", "/secrets/db/password");
    expect(res.status).toBe(500);
    expect(await res.text()).not.toContain("old-value-1");
  });

  it("new values are written as v3 envelopes at value version 1; v1 envelopes written before (value version 0) still open", async () => {
    const v = buildSqliteTestVault();
    await v.asMaster("POST", "/secrets", { key: "k", value: "fresh" });
    const row = v.db.prepare("SELECT ciphertext, value_version FROM secrets WHERE key = 'k'").get() as { ciphertext: Buffer; value_version: number };
    expect(row.ciphertext[0]).toBe(3);
    expect(row.value_version).toBe(1);
    insertSecret(v.db, v.cipher, "legacy", "written-by-v1", v.clock.now(), true);
    const res = await v.asMaster("GET", "/secrets/legacy");
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ value: "written-by-v1" });
  });
});

describe("envelope versions", () => {
  it("a changed version byte fails authentication in every direction", () => {
    const cipher = new ValueCipher(generateRootKey());
    // Value version 0: the one row where every version may open, so only the AAD refuses.
    const place = { scope: "global", key: "k", createdAt: 5, valueVersion: 0 };
    const v3 = cipher.encryptRecord("value", place);
    const v2 = cipher.encrypt("value", aadForRecord(place));
    v2[0] = 2; // a v2 envelope: version byte 2, the v2 AAD
    const v1 = cipher.encrypt("value", aadFor("global", "k"));
    const envelopes = [v1, v2, v3];
    for (const envelope of envelopes) expect(cipher.decryptRecord(envelope, place)).toBe("value");
    for (const envelope of envelopes) {
      for (const version of [1, 2, 3].filter((n) => n !== envelope[0])) {
        const changed = Buffer.from(envelope);
        changed[0] = version;
        expect(() => cipher.decryptRecord(changed, place)).toThrow(/authentication/);
      }
    }
    expect(() => cipher.decryptRecord(v3, { ...place, createdAt: 6 })).toThrow(/authentication/);
    expect(() => cipher.decryptRecord(v3, { ...place, valueVersion: 1 })).toThrow(/authentication/);
  });
});

describe("data-dir lock", () => {
  it("a second holder is refused with a clear message until the first releases it", () => {
    const dir = tempDir();
    const first = lockDataDir(dir, "serve");
    expect(() => lockDataDir(dir, "restore")).toThrow(ConfigError);
    expect(() => lockDataDir(dir, "restore")).toThrow(/another ephemeral-vault is using the data dir/);
    first.release();
    const again = lockDataDir(dir, "restore");
    again.release();
  });
});

describe("rekey", () => {
  it("rewraps every value under the new key in batches; afterwards only the new key is needed", () => {
    const dir = tempDir();
    const file = join(dir, "vault.db");
    const oldKey = generateRootKey();
    const newKey = generateRootKey();
    const oldCipher = new ValueCipher(oldKey);
    let db = openDatabase(file);
    verifyRootKeys(db, oldCipher);
    const expected: Record<string, string> = {};
    for (let i = 0; i < 7; i++) {
      insertSecret(db, oldCipher, `k${i}`, `value-${i}`, 1_000 + i, i % 2 === 0);
      expected[`k${i}`] = `value-${i}`;
    }
    db.prepare("INSERT INTO secrets (scope, key, state, created_at, updated_at) VALUES ('global', 'gone', 'expired', 1, 1)").run();

    const rotating = new ValueCipher(newKey, [oldKey]);
    const report = rekeyDatabase(db, rotating, 3);
    expect(report).toEqual({ rewrapped: 7, alreadyCurrent: 0, failed: 0, remaining: 0 });
    const newOnly = new ValueCipher(newKey);
    for (const r of db.prepare("SELECT ciphertext FROM secrets WHERE ciphertext IS NOT NULL").all() as Stored[]) {
      expect(r.ciphertext[0]).toBe(3);
      expect(envelopeKeyId(r.ciphertext)).toBe(newOnly.currentKeyId);
    }
    // Each rewritten value moved its row's value version by one: v1 rows from 0, v3 rows from 1.
    const versions = db.prepare("SELECT key, value_version FROM secrets WHERE ciphertext IS NOT NULL ORDER BY id").all() as { key: string; value_version: number }[];
    expect(versions.map((r) => r.value_version)).toEqual([1, 2, 1, 2, 1, 2, 1]);
    expect(readAll(db, newOnly)).toEqual(expected);
    expect(rekeyDatabase(db, rotating, 3)).toEqual({ rewrapped: 0, alreadyCurrent: 7, failed: 0, remaining: 0 });
    db.close();
    db = openDatabase(file);
    expect(() => verifyRootKeys(db, newOnly)).not.toThrow();
    db.close();
  });

  it("after a complete rekey a v1 value pasted back into its row no longer opens", () => {
    const db = openDatabase(":memory:");
    const key = generateRootKey();
    const before = new ValueCipher(key);
    verifyRootKeys(db, before);
    insertSecret(db, before, "k", "old-v1-value", 10, true);
    const oldEnvelope = (db.prepare("SELECT ciphertext FROM secrets").get() as Stored).ciphertext;
    expect(rekeyDatabase(db, new ValueCipher(key)).remaining).toBe(0);
    const restarted = new ValueCipher(key);
    // The rekey moved the row's value version: the old envelope alone does not open, even before the start check.
    db.prepare("UPDATE secrets SET ciphertext = ?").run(oldEnvelope);
    expect(() => readAll(db, restarted)).toThrow(/written since value versions began/);
    // With the value version put back too (the whole row rolled back), only the start check's refusal remains.
    db.prepare("UPDATE secrets SET value_version = 0").run();
    expect(readAll(db, restarted)).toEqual({ k: "old-v1-value" }); // before the start check: still accepted
    verifyRootKeys(db, restarted);
    expect(() => readAll(db, restarted)).toThrow(/v1 envelope/);
    db.close();
  });

  it("upgrades v2 envelopes (value version 0) to v3 and then refuses v2 values pasted back, even with the version put back", () => {
    const db = openDatabase(":memory:");
    const key = generateRootKey();
    const cipher = new ValueCipher(key);
    verifyRootKeys(db, cipher);
    const v2 = cipher.encrypt("old-v2-value", aadForRecord({ scope: "global", key: "k", createdAt: 10 }));
    v2[0] = 2;
    db.prepare("INSERT INTO secrets (scope, key, state, ciphertext, created_at, updated_at) VALUES ('global', 'k', 'active', ?, 10, 10)").run(v2);
    // A database a build before value versions rekeyed: v1 refused, v2 at version 0 still opens.
    db.prepare("INSERT INTO meta (name, value) VALUES ('min_envelope_version', '2')").run();
    const before = new ValueCipher(key);
    verifyRootKeys(db, before);
    expect(readAll(db, before)).toEqual({ k: "old-v2-value" });

    expect(rekeyDatabase(db, new ValueCipher(key))).toEqual({ rewrapped: 1, alreadyCurrent: 0, failed: 0, remaining: 0 });
    const row = db.prepare("SELECT ciphertext, value_version FROM secrets").get() as { ciphertext: Buffer; value_version: number };
    expect(row.ciphertext[0]).toBe(3);
    expect(row.value_version).toBe(1);
    expect(db.prepare("SELECT value FROM meta WHERE name = 'min_envelope_version'").get()).toEqual({ value: "3" });
    const restarted = new ValueCipher(key);
    verifyRootKeys(db, restarted);
    expect(readAll(db, restarted)).toEqual({ k: "old-v2-value" });
    db.prepare("UPDATE secrets SET ciphertext = ?").run(v2);
    expect(() => readAll(db, new ValueCipher(key))).toThrow(/written since value versions began/); // before the start check
    expect(() => readAll(db, restarted)).toThrow(/v2 envelope in a database whose values were all upgraded to v3/);
    db.prepare("UPDATE secrets SET value_version = 0").run();
    expect(() => readAll(db, restarted)).toThrow(/v2 envelope in a database whose values were all upgraded to v3/);
    db.close();
  });

  it("refuses when records need a key that is not loaded", () => {
    const db = openDatabase(":memory:");
    const oldCipher = new ValueCipher(generateRootKey());
    verifyRootKeys(db, oldCipher);
    insertSecret(db, oldCipher, "k", "v", 1);
    expect(() => rekeyDatabase(db, new ValueCipher(generateRootKey()))).toThrow(/does not match/);
    db.close();
  });
});

describe("backup and restore", () => {
  function vaultDir(cipher: ValueCipher, values: Record<string, string>): string {
    const dir = tempDir();
    const db = openDatabase(join(dir, "vault.db"));
    verifyRootKeys(db, cipher);
    let t = 1;
    for (const [key, value] of Object.entries(values)) insertSecret(db, cipher, key, value, t++);
    db.close();
    return dir;
  }

  it("backup writes a checked 0600 copy, refuses to overwrite without force, reports progress", async () => {
    const cipher = new ValueCipher(generateRootKey());
    const dir = vaultDir(cipher, { a: "1", b: "2" });
    const dest = join(tempDir(), "copy.db");
    const progress: number[] = [];
    const report = await backupDatabase(join(dir, "vault.db"), dest, cipher, {
      pagesPerStep: 1,
      progressMinPages: 1,
      onProgress: (copied) => progress.push(copied),
    });
    expect(statSync(dest).mode & 0o777).toBe(0o600);
    expect(report.counts.secrets.active).toBe(2);
    expect(progress.length).toBeGreaterThan(1);
    const copy = new Database(dest, { readonly: true });
    expect(copy.pragma("journal_mode", { simple: true })).toBe("delete");
    expect(readAll(copy, cipher)).toEqual({ a: "1", b: "2" });
    copy.close();
    await expect(backupDatabase(join(dir, "vault.db"), dest, cipher)).rejects.toThrow(/pass --force/);
    await expect(backupDatabase(join(dir, "vault.db"), dest, cipher, { force: true })).resolves.toMatchObject({ file: dest });
  });

  it("restore replaces the database, keeping the previous one beside it", async () => {
    const key = generateRootKey();
    const cipher = new ValueCipher(key);
    const source = vaultDir(cipher, { restored: "from-backup" });
    const backup = join(tempDir(), "b.db");
    await backupDatabase(join(source, "vault.db"), backup, cipher);
    const target = vaultDir(cipher, { current: "before" });
    const report = await restoreDatabase(backup, target, new ValueCipher(key), { now: Date.UTC(2026, 10, 23, 12) });
    expect(report.previous).toBe(join(target, "vault.db.before-restore-20261123T120000Z"));
    expect(statSync(report.previous as string).mode & 0o777).toBe(0o600);
    expect(existsSync(join(target, "vault.db-wal"))).toBe(false);
    const db = openDatabase(join(target, "vault.db"));
    expect(readAll(db, cipher)).toEqual({ restored: "from-backup" });
    db.close();
    const kept = new Database(report.previous as string, { readonly: true });
    expect(readAll(kept, cipher)).toEqual({ current: "before" });
    kept.close();
  });

  it("backup and restore keep each row's value version: a replaced value and a v2 row at version 0 read after the restore", async () => {
    const key = generateRootKey();
    const cipher = new ValueCipher(key);
    const source = tempDir();
    const db = openDatabase(join(source, "vault.db"));
    const vault = createSqliteVault(db, { cipher, log: createLogger("silent"), masterKey: MASTER, now: Date.now, activeLimit: () => null, publicUrl: "http://v.test", maxValueBytes: 65_536, trustProxy: false });
    const request = (method: string, path: string, body?: unknown) =>
      Promise.resolve(vault.app.request(path, { method, headers: { authorization: `Bearer ${MASTER}`, "content-type": "application/json" }, body: JSON.stringify(body) }));
    expect((await request("POST", "/secrets", { key: "replaced", value: "value-1" })).status).toBe(201);
    expect((await request("PUT", "/secrets/replaced", { value: "value-2" })).status).toBe(200);
    await vault.engine.tx.close();
    const v2 = cipher.encrypt("written-by-v2", aadForRecord({ scope: "global", key: "legacy", createdAt: 10 }));
    v2[0] = 2;
    db.prepare("INSERT INTO secrets (scope, key, state, ciphertext, created_at, updated_at) VALUES ('global', 'legacy', 'active', ?, 10, 10)").run(v2);
    db.close();

    const backup = join(tempDir(), "b.db");
    await backupDatabase(join(source, "vault.db"), backup, cipher);
    const target = vaultDir(cipher, { current: "before" });
    await restoreDatabase(backup, target, new ValueCipher(key));
    const restored = openDatabase(join(target, "vault.db"));
    expect(restored.prepare("SELECT key, value_version FROM secrets ORDER BY id").all()).toEqual([
      { key: "replaced", value_version: 2 },
      { key: "legacy", value_version: 0 },
    ]);
    expect(readAll(restored, cipher)).toEqual({ replaced: "value-2", legacy: "written-by-v2" });
    restored.close();
  });

  it("restore's check opens the rows of a copy made before value versions (schema 18) at value version 0", () => {
    const key = generateRootKey();
    const cipher = new ValueCipher(key);
    const copy = new Database(":memory:");
    for (const section of schemaSections()) if (section.version <= 18) copy.exec(section.sql);
    copy.pragma("user_version = 18");
    const v2 = cipher.encrypt("written-by-v2", aadForRecord({ scope: "global", key: "old", createdAt: 10 }));
    v2[0] = 2;
    copy.prepare("INSERT INTO secrets (scope, key, state, ciphertext, created_at, updated_at) VALUES ('global', 'old', 'active', ?, 10, 10)").run(v2);
    expect(checkCopy(copy, cipher).secrets.active).toBe(1);
    expect(() => checkCopy(copy, new ValueCipher(generateRootKey()))).toThrow(RestoreRefused);
    copy.close();
  });

  it("restore keeps the writes of a crashed vault's WAL in the database it puts aside", async () => {
    const key = generateRootKey();
    const cipher = new ValueCipher(key);
    const source = vaultDir(cipher, { restored: "from-backup" });
    const backup = join(tempDir(), "b.db");
    await backupDatabase(join(source, "vault.db"), backup, cipher);
    // a crash image: vault.db and a -wal holding a write not yet checkpointed
    const live = tempDir();
    const db = openDatabase(join(live, "vault.db"));
    verifyRootKeys(db, cipher);
    db.pragma("wal_autocheckpoint = 0");
    insertSecret(db, cipher, "only-in-wal", "late-write", 9);
    const crashed = tempDir();
    for (const name of ["vault.db", "vault.db-wal"]) writeFileSync(join(crashed, name), readFileSync(join(live, name)));
    db.close();
    expect(statSync(join(crashed, "vault.db-wal")).size).toBeGreaterThan(0);

    const report = await restoreDatabase(backup, crashed, cipher);
    expect(existsSync(join(crashed, "vault.db-wal"))).toBe(false);
    const kept = new Database(report.previous as string, { readonly: true });
    expect(readAll(kept, cipher)).toEqual({ "only-in-wal": "late-write" });
    kept.close();
    const restored = openDatabase(join(crashed, "vault.db"));
    expect(readAll(restored, cipher)).toEqual({ restored: "from-backup" });
    restored.close();
  });

  it("restore refuses a wrong key, a damaged file and a locked data dir, replacing nothing", async () => {
    const cipher = new ValueCipher(generateRootKey());
    const source = vaultDir(cipher, { s: "backup-value" });
    const backup = join(tempDir(), "b.db");
    await backupDatabase(join(source, "vault.db"), backup, cipher);
    const target = vaultDir(cipher, { t: "live-value" });
    const before = readFileSync(join(target, "vault.db"));

    await expect(restoreDatabase(backup, target, new ValueCipher(generateRootKey()))).rejects.toThrow(RestoreRefused);
    const damaged = join(tempDir(), "damaged.db");
    writeFileSync(damaged, Buffer.concat([readFileSync(backup).subarray(0, 100), Buffer.alloc(4096, 7)]));
    await expect(restoreDatabase(damaged, target, cipher)).rejects.toThrow(RestoreRefused);
    const lock = lockDataDir(target, "serve");
    await expect(restoreDatabase(backup, target, cipher)).rejects.toThrow(/another ephemeral-vault/);
    lock.release();

    expect(readFileSync(join(target, "vault.db")).equals(before)).toBe(true);
    const leftovers = (await import("node:fs")).readdirSync(target).filter((n) => n.startsWith("vault.db."));
    expect(leftovers).toEqual([]);
  });
});
