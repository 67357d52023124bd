import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { auditCommand } from "../../../../src/cli/admin/audit.js";
import { generateRootKey, ValueCipher } from "../../../../src/crypto/cipher.js";
import { rowHash, GENESIS_HASH } from "../../../../src/model/audit/chain.js";
import { HEAD_META, headRecord } from "../../../../src/model/audit/head.js";
import type { AuditRow } from "../../../../src/model/records.js";
import { openDatabase } from "../../../../src/store/sqlite/db.js";
import type { Db } from "../../../../src/store/sqlite/db.js";
import { buildSqliteTestVault } from "../../../support/helpers.js";

// Audit rows hidden from GET /audit by editing only the structures the queries use
// (audit.prev, a secret's audit_head, audit_span), on a real database file, without
// the root key: `audit verify` must report each edit (docs/audit.md, "What is tamper-evident").

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A data dir whose log has reads of a live secret `k`, a deleted secret `gone`, and other rows; the vault stopped (tally written back). */
async function vaultDir(key: Buffer) {
  const dir = mkdtempSync(join(tmpdir(), "ev-hidden-"));
  dirs.push(dir);
  const file = join(dir, "vault.db");
  const v = buildSqliteTestVault({ db: openDatabase(file), cipher: new ValueCipher(key) });
  expect((await v.asMaster("POST", "/secrets", { key: "k", value: "v", max_reads: 100 })).status).toBe(201);
  for (let i = 0; i < 5; i++) expect((await v.asMaster("GET", "/secrets/k")).status).toBe(200);
  expect((await v.asMaster("POST", "/secrets", { key: "gone", value: "v" })).status).toBe(201);
  expect((await v.asMaster("GET", "/secrets/gone")).status).toBe(200);
  expect((await v.asMaster("DELETE", "/secrets/gone")).status).toBe(200);
  expect((await v.asMaster("POST", "/secrets", { key: "other", value: "v" })).status).toBe(201);
  await v.engine.close();
  return { dir, file };
}

async function verify(dir: string, key: Buffer) {
  const o = { out: "", err: "" };
  const code = await auditCommand(["verify", "--data-dir", dir], { VAULT_ENCRYPTION_KEY: key.toString("hex") }, {
    out: (t) => (o.out += t),
    err: (t) => (o.err += t),
  });
  return { code, ...o };
}

/** What GET /audit answers on the file now, by key, by action and unfiltered (a fresh vault over it). */
async function entries(file: string, key: Buffer, query: string): Promise<number[]> {
  const v = buildSqliteTestVault({ db: openDatabase(file), cipher: new ValueCipher(key) });
  const body = (await (await v.asMaster("GET", `/audit?${query}`)).json()) as { entries: { id: number }[] };
  await v.engine.close();
  return body.entries.map((e) => e.id);
}

/** Writes with the triggers dropped, as whoever can write the file can. */
function tamper(file: string, edit: (db: Db) => void): void {
  const db = openDatabase(file);
  db.exec("DROP TRIGGER IF EXISTS audit_no_update; DROP TRIGGER IF EXISTS audit_span_no_delete; DROP TRIGGER IF EXISTS audit_span_no_update;");
  edit(db);
  db.close();
}

const readsOf = (db: Db, key: string) =>
  (db.prepare("SELECT id, prev FROM audit WHERE key = ? AND action = 'secret.read' ORDER BY id").all(key) as { id: number; prev: number }[]);

/**
 * Rehashes every row under the rule of a build before schema version 16 (`prev` not covered) with the
 * root key, re-signs the head and moves the boundary past them: the log as such a build left it.
 */
function asWrittenBeforeLinksWereHashed(file: string, key: Buffer): void {
  tamper(file, (db) => {
    const chainKey = [...new ValueCipher(key).auditChainKeys().values()][0] as Buffer;
    let prev = GENESIS_HASH;
    const rows = db.prepare("SELECT * FROM audit ORDER BY id").all() as (AuditRow & { prev: number | null })[];
    for (const r of rows) {
      const { hash: _hash, prev: _link, ...content } = r;
      prev = rowHash(prev, content, chainKey);
      db.prepare("UPDATE audit SET hash = ? WHERE id = ?").run(prev, r.id);
    }
    db.prepare("UPDATE meta SET value = ? WHERE name = ?").run(headRecord(chainKey, rows.length, prev), HEAD_META);
    db.prepare("UPDATE meta SET value = ? WHERE name = 'audit_prev_from'").run(String(rows.length + 1));
  });
}

describe("audit rows hidden through the derived structures", () => {
  it("a link rewritten to skip a read breaks the chain hash (the row's prev is under it)", async () => {
    const key = generateRootKey();
    const { dir, file } = await vaultDir(key);
    expect((await verify(dir, key)).code).toBe(0);
    tamper(file, (db) => {
      const reads = readsOf(db, "k");
      // The newest read links past the one before it: that read is gone from ?key=k.
      db.prepare("UPDATE audit SET prev = ? WHERE id = ?").run((reads[3] as { prev: number }).prev, (reads[4] as { id: number }).id);
    });
    expect((await entries(file, key, "key=k")).length).toBe(5);
    const r = await verify(dir, key);
    expect(r.out).toMatch(/^audit chain broken at row \d+: hash does not match/);
    expect(r.code).toBe(1);
  });

  describe("on rows written before links were hashed (schema version 16's boundary)", () => {
    it("a link rewritten to skip a read is not the previous row of its key", async () => {
      const key = generateRootKey();
      const { dir, file } = await vaultDir(key);
      asWrittenBeforeLinksWereHashed(file, key);
      expect((await verify(dir, key)).code).toBe(0);
      let skipped = 0;
      tamper(file, (db) => {
        const reads = readsOf(db, "k");
        skipped = (reads[3] as { id: number }).id;
        db.prepare("UPDATE audit SET prev = ? WHERE id = ?").run((reads[3] as { prev: number }).prev, (reads[4] as { id: number }).id);
      });
      expect(await entries(file, key, "key=k")).not.toContain(skipped);
      const r = await verify(dir, key);
      expect(r.out).toMatch(/^audit chain broken at row \d+: the row's link \(prev \d+\) is not the previous row of its key/);
      expect(r.code).toBe(1);
    });

    it("a link set to NULL, cutting the key's older rows off, shows: they are in none of its spans", async () => {
      const key = generateRootKey();
      const { dir, file } = await vaultDir(key);
      asWrittenBeforeLinksWereHashed(file, key);
      tamper(file, (db) => {
        const reads = readsOf(db, "k");
        db.prepare("UPDATE audit SET prev = NULL WHERE id = ?").run((reads[4] as { id: number }).id);
      });
      expect((await entries(file, key, "key=k")).length).toBeLessThan(6);
      const r = await verify(dir, key);
      expect(r.out).toMatch(/in none of its key's spans: it is hidden from queries by key/);
      expect(r.code).toBe(1);
    });
  });

  it("a live secret's head moved back hides the newer reads: the head is not the key's newest row", async () => {
    const key = generateRootKey();
    const { dir, file } = await vaultDir(key);
    tamper(file, (db) => {
      const reads = readsOf(db, "k");
      db.exec("DROP TRIGGER IF EXISTS secrets_no_update");
      db.prepare("UPDATE secrets SET audit_head = ? WHERE key = 'k'").run((reads[1] as { id: number }).id);
      db.prepare("UPDATE secret_reads SET audit_head = ? WHERE id = (SELECT id FROM secrets WHERE key = 'k')").run((reads[1] as { id: number }).id);
    });
    expect((await entries(file, key, "key=k")).length).toBe(3);
    const r = await verify(dir, key);
    expect(r.out).toMatch(/the key's head .* is not the key's newest row/);
    expect(r.code).toBe(1);
  });

  it("a deleted secret's newest key span moved back hides its newest rows", async () => {
    const key = generateRootKey();
    const { dir, file } = await vaultDir(key);
    tamper(file, (db) => {
      const newest = db.prepare("SELECT lo FROM audit_span WHERE kind = 'k' AND value = 'gone' ORDER BY lo DESC LIMIT 1").get() as { lo: number };
      db.prepare("DELETE FROM audit_span WHERE kind = 'k' AND value = 'gone' AND lo = ?").run(newest.lo);
    });
    expect((await entries(file, key, "key=gone")).length).toBeLessThan(3);
    const r = await verify(dir, key);
    expect(r.out).toMatch(/the key's head .* is not the key's newest row/);
    expect(r.code).toBe(1);
  });

  it("a scope span or an action span removed hides rows from the unfiltered list and from ?action=", async () => {
    const key = generateRootKey();
    const a = await vaultDir(key);
    const all = await entries(a.file, key, "");
    tamper(a.file, (db) => db.prepare("DELETE FROM audit_span WHERE kind = 's' AND lo = (SELECT max(lo) FROM audit_span WHERE kind = 's')").run());
    expect((await entries(a.file, key, "")).length).toBeLessThan(all.length);
    let r = await verify(a.dir, key);
    expect(r.out).toMatch(/in none of its scope's spans: it is hidden from the unfiltered list/);
    expect(r.code).toBe(1);

    const b = await vaultDir(key);
    tamper(b.file, (db) => db.prepare("DELETE FROM audit_span WHERE kind = 'a' AND value = 'secret.read'").run());
    expect(await entries(b.file, key, "action=secret.read")).toEqual([]);
    r = await verify(b.dir, key);
    expect(r.out).toMatch(/in none of its action's spans: it is hidden from queries by action/);
    expect(r.code).toBe(1);
  });

  it("a span stretched over another's ids shows as an overlap", async () => {
    const key = generateRootKey();
    const { dir, file } = await vaultDir(key);
    tamper(file, (db) => db.prepare("INSERT INTO audit_span (kind, scope, value, lo, hi) VALUES ('s', 'global', '', 0, 1)").run());
    const r = await verify(dir, key);
    expect(r.out).toMatch(/two audit spans \(s\) overlap/);
    expect(r.code).toBe(1);
  });
});
