import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ValueCipher, generateRootKey } from "../../../../src/crypto/cipher.js";
import { openDatabase } from "../../../../src/store/sqlite/db.js";
import type { Db } from "../../../../src/store/sqlite/db.js";
import { GENESIS_HASH } from "../../../../src/model/audit/chain.js";
import { GroupCommit } from "../../../../src/store/sqlite/group-commit.js";
import { createSqliteWork } from "../../../../src/store/sqlite/index.js";
import type { Work } from "../../../../src/store/work.js";
import { verifyAuditChain } from "../../../../src/store/sqlite/audit/verify.js";
import { createLogger } from "../../../../src/log/log.js";
import { rekeyDatabase } from "../../../../src/store/sqlite/tools/rekey.js";
import { buildSqliteTestVault, createSqliteVault } from "../../../support/helpers.js";

const entry = (action: string) => ({ scope: "global", action, key: null, actor: "master", principalId: null, ip: null });

function vaultOn(db: Db, cipher: ValueCipher) {
  return createSqliteVault(db, {
    cipher,
    log: createLogger("silent"),
    masterKey: "m".repeat(32),
    now: Date.now,
    activeLimit: () => null,
    publicUrl: "http://vault.test",
    maxValueBytes: 65_536,
    trustProxy: false,
  });
}

/** What an attacker with write access but no key can do: rewrite rows and recompute every hash with plain SHA-256. */
function forgeWithPlainSha256(db: Db): void {
  db.exec("DROP TRIGGER audit_no_update; DROP TRIGGER audit_no_delete;");
  db.exec("UPDATE audit SET actor = 'someone-else' WHERE id = 2");
  let prev = GENESIS_HASH;
  const rows = db.prepare("SELECT * FROM audit ORDER BY id").all() as Record<string, unknown>[];
  for (const r of rows) {
    const content = JSON.stringify([prev, r.id, r.scope, r.at, r.action, r.key, r.actor, r.principal_id, r.ip]);
    prev = createHash("sha256").update(content, "utf8").digest("hex");
    db.prepare("UPDATE audit SET hash = ? WHERE id = ?").run(prev, r.id);
  }
  db.prepare("UPDATE meta SET value = ? WHERE name = 'audit_head'").run(JSON.stringify({ id: rows.length, hash: prev }));
}

describe("the keyed audit chain", () => {
  it("verifies with the root key, and not without it", async () => {
    const v = buildSqliteTestVault();
    for (let i = 0; i < 3; i++) await v.asMaster("POST", "/secrets", { key: `k${i}`, value: "v" });
    expect(verifyAuditChain(v.db, v.cipher.auditChainKeys())).toMatchObject({ ok: true, rows: 3 });
    expect(verifyAuditChain(v.db, new ValueCipher(generateRootKey()).auditChainKeys())).toMatchObject({ ok: false });
  });

  it("detects a chain rewritten and recomputed with plain SHA-256", async () => {
    const v = buildSqliteTestVault();
    for (let i = 0; i < 4; i++) await v.asMaster("POST", "/secrets", { key: `k${i}`, value: "v" });
    forgeWithPlainSha256(v.db);
    expect(verifyAuditChain(v.db, v.cipher.auditChainKeys())).toMatchObject({ ok: false, brokenId: 1 });
  });

  it("detects a segment record rewritten to claim the whole chain is plain", async () => {
    const v = buildSqliteTestVault();
    for (let i = 0; i < 4; i++) await v.asMaster("POST", "/secrets", { key: `k${i}`, value: "v" });
    forgeWithPlainSha256(v.db);
    v.db.prepare("UPDATE meta SET value = ? WHERE name = 'audit_chain'").run(JSON.stringify({ segments: [{ from: 1, key: null }], mac: "00" }));
    expect(verifyAuditChain(v.db, v.cipher.auditChainKeys())).toMatchObject({ ok: false });
    v.db.prepare("DELETE FROM meta WHERE name = 'audit_chain'").run();
    expect(verifyAuditChain(v.db, v.cipher.auditChainKeys())).toMatchObject({ ok: false, reason: expect.stringMatching(/segment record is missing/) });
  });

  it("keeps the plain rows written before the chain was keyed, and keys the rows after them", async () => {
    const db = openDatabase(":memory:");
    // A log written before keying: plain SHA-256 rows and no segment record.
    const legacy = vaultOn(db, new ValueCipher(generateRootKey()));
    db.prepare("DELETE FROM meta WHERE name = 'audit_chain'").run();
    // The stores of a build before keying: no chain key, plain SHA-256.
    const plain = createSqliteWork(db);
    const plainTx = new GroupCommit<Work>(db, plain);
    plain.audit.attach(plainTx);
    await plainTx.run((w) => legacy.audit.record(w, entry("old.one")));
    await plainTx.run((w) => legacy.audit.record(w, entry("old.two")));
    // The next start keys the chain from the next row on.
    const cipher = new ValueCipher(generateRootKey());
    const v = vaultOn(db, cipher);
    await v.tx.run((w) => v.audit.record(w, entry("new.one")));
    expect(verifyAuditChain(db, cipher.auditChainKeys())).toMatchObject({ ok: true, rows: 3 });
    const chain = JSON.parse((db.prepare("SELECT value FROM meta WHERE name = 'audit_chain'").get() as { value: string }).value);
    expect(chain.segments).toEqual([
      { from: 1, key: null },
      { from: 3, key: cipher.currentKeyId },
    ]);
  });

  it("goes on under the new key after rekey; verify needs the old key for the old segment", async () => {
    const db = openDatabase(":memory:");
    const oldRoot = generateRootKey();
    const before = vaultOn(db, new ValueCipher(oldRoot));
    await before.tx.run((w) => before.audit.record(w, entry("under.old")));
    await before.tx.run((w) => before.secrets.create(w, { scope: "global", key: "s", value: "v" }, { actor: null, principalId: null, ip: null }));
    const both = new ValueCipher(generateRootKey(), [oldRoot]);
    expect(rekeyDatabase(db, both).remaining).toBe(0);
    const onlyNew = new ValueCipher(Buffer.from((both as unknown as { keys: Map<string, Buffer> }).keys.get(both.currentKeyId) as Buffer));
    const after = vaultOn(db, onlyNew);
    await after.tx.run((w) => after.audit.record(w, entry("under.new")));
    expect(verifyAuditChain(db, both.auditChainKeys())).toMatchObject({ ok: true, rows: 3 });
    expect(verifyAuditChain(db, onlyNew.auditChainKeys())).toMatchObject({ ok: false, brokenId: 1, reason: expect.stringMatching(/not loaded/) });
  });
});
