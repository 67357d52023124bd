import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { auditCommand } from "../../../../src/cli/admin/audit.js";
import { ValueCipher, generateRootKey } from "../../../../src/crypto/cipher.js";
import { openDatabase } from "../../../../src/store/sqlite/db.js";
import { verifyAuditChain } from "../../../../src/store/sqlite/audit/verify.js";
import { createLogger } from "../../../../src/log/log.js";
import { SqliteAuditStore } from "../../../../src/store/sqlite/audit/store.js";
import { buildSqliteTestVault, createKey, createSqliteVault, MASTER_KEY } from "../../../support/helpers.js";
import { actions } from "../../../support/audit-helpers.js";

// The audit log's SQLite side: the statements' query plans, the rows buffered per batch of the
// group commit, the append-only triggers, the hash chain in the SQLite audit table
// (docs/audit.md). What reaches the log over HTTP, on both engines, is test/http/routes/audit.test.ts.

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

describe("GET /audit on SQLite", () => {
  it("answers each query by seeking spans and the table's id ranges: never a scan, never a sort", () => {
    const v = buildSqliteTestVault();
    const statements = (new SqliteAuditStore(v.db, null) as unknown as { q: Record<string, { source: string }> }).q;
    for (const name of ["page", "spanBefore", "firstFrom", "maxId", "last"]) {
      const source = statements[name]?.source;
      expect(source, name).toBeDefined();
      const params = { kind: "a", scope: "global", value: "secret.read", from: 0, lo: 0, hi: 10, action: "secret.read", key: "k", glob: null, limit: 10 };
      const args = name === "page" ? [params] : name === "spanBefore" ? ["k", "global", "k", 5] : name === "firstFrom" ? [0] : [];
      const details = (v.db.prepare(`EXPLAIN QUERY PLAN ${source as string}`).all(...args) as { detail: string }[]).map((p) => p.detail).join("; ");
      expect(details, name).not.toMatch(/SCAN/);
      expect(details, name).not.toMatch(/TEMP B-TREE/);
    }
  });
});

describe("rows buffered per batch", () => {
  const entry = (action: string) => ({ scope: "global", action, key: null, actor: "master", principalId: null, ip: null });

  it("inserts a batch's rows at its commit, drops those of a rolled-back request, and keeps the chain whole", async () => {
    const v = buildSqliteTestVault();
    const one = v.tx.run((w) => v.audit.record(w, entry("one")));
    const dropped = expect(
      v.tx.run(async (w) => {
        await v.audit.record(w, entry("dropped"));
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    const two = v.tx.run((w) => v.audit.record(w, entry("two")));
    // Not in the table before the batch commits.
    expect(v.db.prepare("SELECT count(*) AS n FROM audit").get()).toEqual({ n: 0 });
    await one;
    await dropped;
    await two;
    const rows = v.db.prepare("SELECT id, action FROM audit ORDER BY id").all();
    expect(rows).toEqual([
      { id: 1, action: "one" },
      { id: 2, action: "two" },
    ]);
    expect(verifyAuditChain(v.db, v.cipher.auditChainKeys())).toEqual(expect.objectContaining({ ok: true, rows: 2 }));
  });

  it("drops every row of a batch whose commit fails, and chains the next batch to the table", async () => {
    const v = buildSqliteTestVault();
    await v.tx.run((w) => v.audit.record(w, entry("kept")));
    let fail = true;
    v.sqlite.tx.onBeforeCommit(() => {
      if (fail) {
        fail = false;
        throw new Error("disk full");
      }
    });
    await expect(v.tx.run((w) => v.audit.record(w, entry("lost")))).rejects.toThrow("disk full");
    await v.tx.run((w) => v.audit.record(w, entry("after")));
    const rows = v.db.prepare("SELECT id, action FROM audit ORDER BY id").all();
    expect(rows).toEqual([
      { id: 1, action: "kept" },
      { id: 2, action: "after" },
    ]);
    expect(verifyAuditChain(v.db, v.cipher.auditChainKeys())).toEqual(expect.objectContaining({ ok: true, rows: 2 }));
  });
});

describe("append-only and fail-closed", () => {
  it("refuses UPDATE and DELETE on audit rows in the database itself", async () => {
    const v = buildSqliteTestVault();
    await v.asMaster("POST", "/secrets", { key: "k", value: "v" });
    expect(() => v.db.prepare("UPDATE audit SET action = 'secret.read'").run()).toThrow(/append-only/);
    expect(() => v.db.prepare("DELETE FROM audit").run()).toThrow(/append-only/);
    expect(await actions(v)).toEqual(["secret.created"]);
  });

  it("does not make a change whose audit row cannot be written", async () => {
    const v = buildSqliteTestVault();
    await v.asMaster("POST", "/secrets", { key: "kept", value: "v" });
    v.db.exec("CREATE TEMP TRIGGER audit_broken BEFORE INSERT ON audit BEGIN SELECT RAISE(ABORT, 'disk says no'); END");
    const create = await v.asMaster("POST", "/secrets", { key: "new", value: "v" });
    expect(create.status).toBe(500);
    expect(await create.json()).toEqual({ error: "internal server error" });
    expect((await v.asMaster("DELETE", "/secrets/kept")).status).toBe(500);
    v.db.exec("DROP TRIGGER audit_broken");
    expect((await v.asMaster("GET", "/secrets/new")).status).toBe(404);
    expect((await v.asMaster("GET", "/secrets/kept")).status).toBe(200);
  });

  it("does not answer a scoped key's read whose audit row cannot be written", async () => {
    const v = buildSqliteTestVault();
    await v.asMaster("POST", "/secrets", { key: "k", value: "v" });
    const admin = await createKey(v, { permissions: ["admin"] });
    v.db.exec("CREATE TEMP TRIGGER audit_broken BEFORE INSERT ON audit BEGIN SELECT RAISE(ABORT, 'disk says no'); END");
    const list = await v.request("GET", "/secrets", { token: admin.token });
    expect(list.status).toBe(500);
    expect(await list.text()).not.toContain('"k"');
  });
});

describe("the hash chain", () => {
  function tamper(db: Database.Database, sql: string): void {
    db.exec("DROP TRIGGER audit_no_update; DROP TRIGGER audit_no_delete;");
    db.exec(sql);
  }

  it("verifies an untouched chain", async () => {
    const v = buildSqliteTestVault();
    for (let i = 0; i < 5; i++) await v.asMaster("POST", "/secrets", { key: `k${i}`, value: "v" });
    expect(verifyAuditChain(v.db, v.cipher.auditChainKeys())).toEqual({ ok: true, rows: 5, head: expect.stringMatching(/^[0-9a-f]{64}$/) });
  });

  it("reports the first row edited through a raw connection", async () => {
    const v = buildSqliteTestVault();
    for (let i = 0; i < 5; i++) await v.asMaster("POST", "/secrets", { key: `k${i}`, value: "v" });
    tamper(v.db, "UPDATE audit SET actor = 'someone-else' WHERE id = 3");
    expect(verifyAuditChain(v.db, v.cipher.auditChainKeys())).toMatchObject({ ok: false, brokenId: 3, rows: 2 });
  });

  it("reports a row edited with its own hash recomputed at the next row", async () => {
    const v = buildSqliteTestVault();
    for (let i = 0; i < 5; i++) await v.asMaster("POST", "/secrets", { key: `k${i}`, value: "v" });
    tamper(v.db, "UPDATE audit SET hash = '" + "a".repeat(64) + "' WHERE id = 2");
    expect(verifyAuditChain(v.db, v.cipher.auditChainKeys())).toMatchObject({ ok: false, brokenId: 2 });
  });

  it("reports a removed row and a removed tail", async () => {
    const v = buildSqliteTestVault();
    for (let i = 0; i < 5; i++) await v.asMaster("POST", "/secrets", { key: `k${i}`, value: "v" });
    tamper(v.db, "DELETE FROM audit WHERE id = 5");
    expect(verifyAuditChain(v.db, v.cipher.auditChainKeys())).toMatchObject({ ok: false, brokenId: 5 });
    v.db.exec("DELETE FROM audit WHERE id = 2");
    expect(verifyAuditChain(v.db, v.cipher.auditChainKeys())).toMatchObject({ ok: false, brokenId: 3 });
  });

  it("chains org and global entries in one table", async () => {
    const v = buildSqliteTestVault();
    await v.asMaster("POST", "/secrets", { key: "g", value: "v" });
    await v.tx.run((w) => v.audit.record(w, { scope: "org_1", action: "secret.created", key: "o", actor: "pk_1", principalId: "prn_1", ip: "10.0.0.1" }));
    await v.asMaster("POST", "/secrets", { key: "g2", value: "v" });
    expect(verifyAuditChain(v.db, v.cipher.auditChainKeys())).toMatchObject({ ok: true, rows: 3 });
    tamper(v.db, "UPDATE audit SET principal_id = 'prn_2' WHERE scope = 'org_1'");
    expect(verifyAuditChain(v.db, v.cipher.auditChainKeys())).toMatchObject({ ok: false, brokenId: 2 });
  });

  it("ephemeral-vault audit verify --data-dir walks a data dir's chain and names the broken row", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vault-audit-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const db = openDatabase(join(dir, "vault.db"));
    const root = generateRootKey();
    const vault = createSqliteVault(db, {
      cipher: new ValueCipher(root),
      log: createLogger("silent"),
      masterKey: MASTER_KEY,
      now: Date.now,
      activeLimit: () => null,
      publicUrl: "http://vault.test",
      maxValueBytes: 65_536,
      trustProxy: false,
    });
    for (const key of ["one", "two", "three"]) {
      const res = await vault.app.request("/secrets", {
        method: "POST",
        headers: { authorization: `Bearer ${MASTER_KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ key, value: "v" }),
      });
      expect(res.status).toBe(201);
    }
    vault.engine.tx.close();
    db.close();

    const run = async () => {
      let out = "";
      const env = { VAULT_ENCRYPTION_KEY: root.toString("hex") };
      const code = await auditCommand(["verify", "--data-dir", dir], env, { out: (t) => (out += t), err: (t) => (out += t) });
      return { code, out };
    };
    expect(await run()).toEqual({ code: 0, out: expect.stringMatching(/^audit chain intact: 3 rows, head [0-9a-f]{64}\n$/) });

    const raw = new Database(join(dir, "vault.db"));
    tamper(raw, "UPDATE audit SET key = 'forged' WHERE id = 2");
    raw.close();
    const broken = await run();
    expect(broken.code).toBe(1);
    expect(broken.out).toMatch(/^audit chain broken at row 2: /);
  });

  it("audit verify refuses a directory without a database (usage error)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vault-audit-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    await expect(auditCommand(["verify", "--data-dir", dir], {}, { out: () => {}, err: () => {} })).rejects.toThrow(/no database/);
    await expect(auditCommand(["check"], {}, { out: () => {}, err: () => {} })).rejects.toThrow(/verify/);
  });
});

describe("the audit chain under the group commit", () => {
  const row = (action: string) => ({ scope: "global", action, key: null, actor: "master", principalId: null, ip: null });

  it("stays whole when a request's savepoint rolls back after writing a row, and its head is the last row", async () => {
    const v = buildSqliteTestVault();
    await v.asMaster("POST", "/secrets", { key: "a", value: "v" });
    const failing = v.tx.run(async (w) => {
      await v.audit.record(w, row("test.rolled-back"));
      throw new Error("boom");
    });
    const kept = v.tx.run((w) => v.audit.record(w, row("test.kept")));
    await expect(failing).rejects.toThrow("boom");
    await kept;
    await v.asMaster("GET", "/secrets/a");

    const report = verifyAuditChain(v.db, v.cipher.auditChainKeys());
    expect(report).toMatchObject({ ok: true, rows: 3 });
    expect(await actions(v)).toEqual(["secret.created", "test.kept", "secret.read"]);
    const head = JSON.parse((v.db.prepare("SELECT value FROM meta WHERE name = 'audit_head'").get() as { value: string }).value);
    const last = v.db.prepare("SELECT id, hash FROM audit ORDER BY id DESC LIMIT 1").get() as { id: number; hash: string };
    expect(head).toEqual({ id: last.id, hash: last.hash, mac: expect.stringMatching(/^[0-9a-f]{64}$/) });
  });

  it("chains a batch's rows at its commit around a rolled-back row in the middle, and the next batch after them", async () => {
    const v = buildSqliteTestVault();
    const first = v.tx.run((w) => v.audit.record(w, row("test.first")));
    const failing = v.tx.run(async (w) => {
      await v.audit.record(w, row("test.rolled-back"));
      throw new Error("boom");
    });
    const second = v.tx.run((w) => v.audit.record(w, row("test.second")));
    await expect(failing).rejects.toThrow("boom");
    await Promise.all([first, second]);
    await v.tx.run((w) => v.audit.record(w, row("test.next-batch")));
    expect(verifyAuditChain(v.db, v.cipher.auditChainKeys())).toMatchObject({ ok: true, rows: 3 });
    expect(await actions(v)).toEqual(["test.first", "test.second", "test.next-batch"]);
    const ids = (v.db.prepare("SELECT id FROM audit ORDER BY id").all() as { id: number }[]).map((r) => r.id);
    expect(ids).toEqual([1, 2, 3]);
  });

  it("writes nothing of a batch whose commit fails, and chains the next batch from the table", async () => {
    const v = buildSqliteTestVault();
    await v.asMaster("POST", "/secrets", { key: "a", value: "v" });
    v.sqlite.tx.onBeforeCommit(() => {
      if (v.db.prepare("SELECT 1 FROM audit WHERE action = 'test.doomed'").get()) throw new Error("commit refused");
    });
    await expect(v.tx.run((w) => v.audit.record(w, row("test.doomed")))).rejects.toThrow("commit refused");
    await v.asMaster("GET", "/secrets/a");
    expect(verifyAuditChain(v.db, v.cipher.auditChainKeys())).toMatchObject({ ok: true, rows: 2 });
  });
});
