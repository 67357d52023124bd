import { createHmac } from "node:crypto";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { auditCommand } from "../../../src/cli/admin/audit.js";
import { generateRootKey, ValueCipher } from "../../../src/crypto/cipher.js";
import { openDatabase } from "../../../src/store/sqlite/db.js";
import type { Db } from "../../../src/store/sqlite/db.js";
import { openChain } from "../../../src/store/sqlite/audit/chain.js";
import { buildSqliteTestVault } from "../../support/helpers.js";

// Authenticated chain heads and audit anchors on SQLite (docs/audit.md);
// the PostgreSQL side is test/domain/audit/anchor.pg.test.ts.

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function vaultDir(key: Buffer, n: number) {
  const dir = mkdtempSync(join(tmpdir(), "ev-anchor-"));
  dirs.push(dir);
  const db = openDatabase(join(dir, "vault.db"));
  const v = buildSqliteTestVault({ db, cipher: new ValueCipher(key) });
  const write = async (prefix: string, count: number) => {
    for (let i = 0; i < count; i++) expect((await v.asMaster("POST", "/secrets", { key: `${prefix}${i}`, value: "v" })).status).toBe(201);
  };
  await write("k", n);
  return { dir, db, write };
}

async function audit(dir: string, key: Buffer, args: string[]) {
  const o = { out: "", err: "" };
  const code = await auditCommand([...args, "--data-dir", dir], { VAULT_ENCRYPTION_KEY: key.toString("hex") }, {
    out: (t) => (o.out += t),
    err: (t) => (o.err += t),
  });
  return { code, ...o };
}

/** What the finding did: drop the delete guard, cut rows off the end, point the head at the new last row. */
function truncate(db: Db, keep: number): void {
  db.exec("DROP TRIGGER IF EXISTS audit_no_delete");
  db.prepare("DELETE FROM audit WHERE id > ?").run(keep);
  const last = db.prepare("SELECT id, hash FROM audit WHERE id = ?").get(keep) as { id: number; hash: string } | undefined;
  db.prepare("UPDATE meta SET value = ? WHERE name = 'audit_head'").run(JSON.stringify(last ?? { id: 0, hash: "0".repeat(64) }));
}

describe("authenticated audit head (SQLite)", () => {
  it("a tail cut off with the head rewritten fails verify (exit 1)", async () => {
    const key = generateRootKey();
    const { dir, db } = await vaultDir(key, 4);
    expect((await audit(dir, key, ["verify"])).code).toBe(0);
    truncate(db, 1);
    const r = await audit(dir, key, ["verify"]);
    expect(r.out).toMatch(/^audit chain broken at row \d+: the recorded chain head is not authentic/);
    expect(r.code).toBe(1);
  });

  it("every row removed, with the head, fails verify", async () => {
    const key = generateRootKey();
    const { dir, db } = await vaultDir(key, 3);
    db.exec("DROP TRIGGER audit_no_delete; DELETE FROM audit; DELETE FROM meta WHERE name = 'audit_head'");
    const r = await audit(dir, key, ["verify"]);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/head is missing/);
    // The next start does not take the empty log for a new one.
    const cipher = new ValueCipher(key);
    expect(openChain(db, cipher.currentKeyId, cipher.auditChainKeys())).toBe(false);
    expect((await audit(dir, key, ["verify"])).code).toBe(1);
  });

  it("a head moved back and signed without the key (copied MAC of another head) fails", async () => {
    const key = generateRootKey();
    const { dir, db } = await vaultDir(key, 3);
    const head = JSON.parse((db.prepare("SELECT value FROM meta WHERE name = 'audit_head'").get() as { value: string }).value) as { mac: string };
    truncate(db, 2);
    const moved = JSON.parse((db.prepare("SELECT value FROM meta WHERE name = 'audit_head'").get() as { value: string }).value) as object;
    db.prepare("UPDATE meta SET value = ? WHERE name = 'audit_head'").run(JSON.stringify({ ...moved, mac: head.mac }));
    expect((await audit(dir, key, ["verify"])).code).toBe(1);
  });
});

describe("a log written before heads were signed", () => {
  it("verifies as before, is signed at the next start, and an unsigned head is never accepted after that", async () => {
    const key = generateRootKey();
    const cipher = new ValueCipher(key);
    const chainKey = cipher.auditChainKeys().get(cipher.currentKeyId) as Buffer;
    const { dir, db } = await vaultDir(key, 3);
    // The records as an older build wrote them: the segment MAC over the segments alone, the head without a MAC.
    const meta = (name: string) => JSON.parse((db.prepare("SELECT value FROM meta WHERE name = ?").get(name) as { value: string }).value);
    const segments = meta("audit_chain").segments as unknown[];
    const legacyMac = createHmac("sha256", chainKey).update(JSON.stringify(segments)).digest("hex");
    const head = meta("audit_head") as { id: number; hash: string };
    const set = db.prepare("UPDATE meta SET value = ? WHERE name = ?");
    set.run(JSON.stringify({ segments, mac: legacyMac }), "audit_chain");
    set.run(JSON.stringify({ id: head.id, hash: head.hash }), "audit_head");
    expect((await audit(dir, key, ["verify"])).code).toBe(0);
    expect(openChain(db, cipher.currentKeyId, cipher.auditChainKeys())).toBe(true);
    expect(meta("audit_chain").signedHeads).toBe(true);
    expect(meta("audit_head").mac).toMatch(/^[0-9a-f]{64}$/);
    expect((await audit(dir, key, ["verify"])).code).toBe(0);
    set.run(JSON.stringify({ id: head.id, hash: head.hash }), "audit_head");
    expect((await audit(dir, key, ["verify"])).code).toBe(1);
    expect(openChain(db, cipher.currentKeyId, cipher.auditChainKeys())).toBe(false);
  });
});

describe("audit anchors (SQLite)", () => {
  it("audit head, then more rows, then verify --anchor: the anchor holds", async () => {
    const key = generateRootKey();
    const { dir, write } = await vaultDir(key, 3);
    const head = await audit(dir, key, ["head"]);
    expect(head.code, head.out).toBe(0);
    expect(head.out).toMatch(/^ephemeral-vault-audit-anchor v1 engine=sqlite at=\S+ rows=3 heads=-:3:[0-9a-f]{64} key=[0-9a-f]{16} mac=[0-9a-f]{64}\n$/);
    await write("more", 2);
    const r = await audit(dir, key, ["verify", "--anchor", head.out.trim()]);
    expect(r.out).toMatch(/^audit chain intact: 5 rows, head [0-9a-f]{64}; the anchor holds\n$/);
    expect(r.code).toBe(0);
  });

  it("a whole database put back to an older state of its own verifies alone, but not against a later anchor", async () => {
    const key = generateRootKey();
    const { dir, db, write } = await vaultDir(key, 2);
    const old = join(dir, "old.db");
    db.exec(`VACUUM INTO '${old}'`);
    await write("later", 3);
    const anchor = (await audit(dir, key, ["head"])).out.trim();
    db.close();
    rmSync(join(dir, "vault.db-wal"), { force: true });
    rmSync(join(dir, "vault.db-shm"), { force: true });
    copyFileSync(old, join(dir, "vault.db"));
    expect((await audit(dir, key, ["verify"])).code).toBe(0);
    const r = await audit(dir, key, ["verify", "--anchor", anchor]);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^audit log does not hold its anchor: the log is shorter than the anchor/);
  });

  it("a tail cut off below the anchor fails; an altered or foreign anchor is refused (exit 2)", async () => {
    const key = generateRootKey();
    const { dir, db } = await vaultDir(key, 4);
    const anchor = (await audit(dir, key, ["head"])).out.trim();
    await expect(audit(dir, key, ["verify", "--anchor", anchor.replace("rows=4", "rows=3")])).rejects.toThrow(/MAC does not match/);
    // Another root key: the log's key is not loaded, so nothing is verified (3, not 1: no sign of tampering).
    await expect(audit(dir, generateRootKey(), ["head"])).resolves.toMatchObject({ code: 3 });
    truncate(db, 2);
    const r = await audit(dir, key, ["verify", "--anchor", anchor]);
    expect(r.code).toBe(1);
  });
});
