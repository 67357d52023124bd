import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { generateRootKey, ValueCipher } from "../../src/crypto/cipher.js";
import { openDatabase } from "../../src/store/sqlite/db.js";
import { backupCommand } from "../../src/cli/admin/backup.js";
import { restoreCommand } from "../../src/cli/admin/restore.js";
import { hashToken } from "../../src/crypto/tokens.js";
import { buildSqliteTestVault } from "../support/helpers.js";

// Backups are authenticated (a MAC under a key derived from the root key), and
// restore refuses schema objects the vault does not define and a broken audit
// chain, before anything is replaced (docs/operations.md, Backups).

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "ev-backup-auth-"));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function output() {
  const o = { out: "", err: "" };
  return { o, sink: { out: (t: string) => (o.out += t), err: (t: string) => (o.err += t) } };
}

/** A data dir with a vault that wrote secrets (and their audit rows) through the real routes. */
async function vaultDir(key: Buffer, secrets: Record<string, string>): Promise<string> {
  const dir = tempDir();
  const db = openDatabase(join(dir, "vault.db"));
  const v = buildSqliteTestVault({ db, cipher: new ValueCipher(key) });
  for (const [k, value] of Object.entries(secrets)) {
    const res = await v.asMaster("POST", "/secrets", { key: k, value });
    expect(res.status).toBe(201);
  }
  db.close();
  return dir;
}

const envOf = (key: Buffer) => ({ VAULT_ENCRYPTION_KEY: key.toString("hex") });

async function backup(dataDir: string, key: Buffer): Promise<string> {
  const file = join(tempDir(), "backup.db");
  const { o, sink } = output();
  const code = await backupCommand([file, "--data-dir", dataDir], envOf(key), sink);
  expect(code, o.err).toBe(0);
  return file;
}

async function restore(file: string, dataDir: string, key: Buffer, extra: string[] = []) {
  const { o, sink } = output();
  const code = await restoreCommand([file, "--data-dir", dataDir, ...extra], envOf(key), sink);
  return { code, ...o };
}

/** Plants what the finding planted: an unprefixed admin key with a known token, and a trigger that brings it back. */
function plantBackdoor(file: string): void {
  const db = new Database(file);
  db.prepare(
    "INSERT INTO scoped_keys (id, name, token_hash, permissions, prefix, expires_at, created_at) VALUES ('sk_planted', 'x', ?, '[\"admin\"]', NULL, NULL, 1)",
  ).run(hashToken("vsk_planted_token"));
  db.exec(`CREATE TRIGGER keep_planted AFTER DELETE ON scoped_keys BEGIN
    INSERT INTO scoped_keys (id, name, token_hash, permissions, prefix, expires_at, created_at)
      VALUES (old.id, old.name, old.token_hash, old.permissions, old.prefix, old.expires_at, old.created_at);
  END`);
  db.close();
}

describe("restore of a tampered backup", () => {
  it("refuses a backup with a planted admin key and trigger; the live database is unchanged", async () => {
    const key = generateRootKey();
    const source = await vaultDir(key, { a: "1" });
    const file = await backup(source, key);
    plantBackdoor(file);
    const target = await vaultDir(key, { live: "2" });
    const before = readFileSync(join(target, "vault.db"));
    const r = await restore(file, target, key);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/restore refused: .*MAC/);
    expect(readFileSync(join(target, "vault.db")).equals(before)).toBe(true);
  });

  it("refuses planted schema objects even when the MAC check is skipped (--unauthenticated)", async () => {
    const key = generateRootKey();
    const source = await vaultDir(key, { a: "1" });
    const file = await backup(source, key);
    plantBackdoor(file);
    rmSync(`${file}.mac`);
    const target = await vaultDir(key, { live: "2" });
    const before = readFileSync(join(target, "vault.db"));
    const r = await restore(file, target, key, ["--unauthenticated"]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/trigger keep_planted/);
    expect(readFileSync(join(target, "vault.db")).equals(before)).toBe(true);
  });

  it("refuses an altered vault trigger (the append-only guard defused), whatever the MAC says", async () => {
    const key = generateRootKey();
    const source = await vaultDir(key, { a: "1" });
    const file = await backup(source, key);
    const db = new Database(file);
    db.exec("DROP TRIGGER audit_no_delete; CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit BEGIN SELECT 1; END");
    db.close();
    rmSync(`${file}.mac`);
    const target = await vaultDir(key, { live: "2" });
    const r = await restore(file, target, key, ["--unauthenticated"]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/trigger audit_no_delete differs from the vault's schema/);
  });

  it("refuses a backup with one byte changed, and one whose MAC file is missing", async () => {
    const key = generateRootKey();
    const source = await vaultDir(key, { a: "1" });
    const file = await backup(source, key);
    const target = await vaultDir(key, { live: "2" });
    const before = readFileSync(join(target, "vault.db"));
    const bytes = readFileSync(file);
    const changed = join(tempDir(), "changed.db");
    const flipped = Buffer.from(bytes);
    flipped[flipped.length - 100] = (flipped[flipped.length - 100] as number) ^ 1;
    writeFileSync(changed, flipped);
    writeFileSync(`${changed}.mac`, readFileSync(`${file}.mac`));
    const r1 = await restore(changed, target, key);
    expect(r1.code).toBe(1);
    expect(r1.err).toMatch(/MAC does not match/);
    // --unauthenticated accepts a missing MAC file, never one that does not match.
    expect((await restore(changed, target, key, ["--unauthenticated"])).code).toBe(1);
    const bare = join(tempDir(), "bare.db");
    writeFileSync(bare, bytes);
    const r = await restore(bare, target, key);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/no MAC file/);
    expect(readFileSync(join(target, "vault.db")).equals(before)).toBe(true);
    // A MAC under another root key is refused too.
    const other = await restore(file, target, generateRootKey());
    expect(other.code).not.toBe(0);
  });

  it("restores a good backup, and an old build's backup (no MAC file) only with --unauthenticated", async () => {
    const key = generateRootKey();
    const source = await vaultDir(key, { a: "1" });
    const file = await backup(source, key);
    const target = await vaultDir(key, { live: "2" });
    const r = await restore(file, target, key);
    expect(r.code, r.err).toBe(0);
    const db = new Database(join(target, "vault.db"), { readonly: true });
    expect((db.prepare("SELECT key FROM secrets").all() as { key: string }[]).map((x) => x.key)).toEqual(["a"]);
    db.close();
    rmSync(`${file}.mac`);
    const target2 = await vaultDir(key, { live: "3" });
    expect((await restore(file, target2, key)).code).toBe(1);
    const legacy = await restore(file, target2, key, ["--unauthenticated"]);
    expect(legacy.code, legacy.err).toBe(0);
    expect(legacy.err).toMatch(/not authenticated/);
  });

  it("refuses a backup whose audit chain is broken", async () => {
    const key = generateRootKey();
    const source = await vaultDir(key, { a: "1", b: "2", c: "3" });
    const file = await backup(source, key);
    const db = new Database(file);
    const trigger = db.prepare("SELECT sql FROM sqlite_master WHERE name = 'audit_no_update'").pluck().get() as string;
    db.exec("DROP TRIGGER audit_no_update");
    db.exec("UPDATE audit SET actor = 'someone-else' WHERE id = 2");
    db.exec(trigger); // the schema is as the vault defines it: only the chain is broken
    db.close();
    rmSync(`${file}.mac`);
    const target = await vaultDir(key, { live: "2" });
    const before = readFileSync(join(target, "vault.db"));
    const r = await restore(file, target, key, ["--unauthenticated"]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/audit/);
    expect(readFileSync(join(target, "vault.db")).equals(before)).toBe(true);
    expect(existsSync(join(target, "vault.db-journal"))).toBe(false);
  });
});
