import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { prepareReveal, sealEnvelope } from "@ephemeral-vault/client";
import { aadForRecord, rootKeyId, ValueCipher } from "../../../src/crypto/cipher.js";
import { rekeyDatabase } from "../../../src/store/sqlite/tools/rekey.js";
import { openDatabase } from "../../../src/store/sqlite/db.js";
import { createLogger } from "../../../src/log/log.js";
import { migrateFromSqlite } from "../../../src/ops/migrate-to-pg.js";
import { verifyPgAuditChains } from "../../../src/store/pg/audit/verify.js";
import { openPgPool, pgEngineOver } from "../../../src/store/pg/index.js";
import { createVault } from "../../../src/assembly/vault.js";
import { cleanupTemp, runCommand, tempDir } from "../../support/e2e-helpers.js";
import { createSqliteVault, MASTER_KEY } from "../../support/helpers.js";
import { createTestDatabase, describePg } from "../../support/pg-database.js";
import type { TestDatabase } from "../../support/pg-database.js";

// `ephemeral-vault migrate --from-sqlite DIR --to postgres://...` and
// `audit verify` on PostgreSQL, against a real server.

const ROOT_KEY = Buffer.alloc(32, 7);
const databases: TestDatabase[] = [];

afterAll(async () => {
  for (const db of databases.splice(0)) await db.drop();
  cleanupTemp();
});

const common = (cipher: ValueCipher) => ({
  cipher,
  log: createLogger("silent"),
  masterKey: MASTER_KEY,
  now: () => Date.now(),
  activeLimit: () => null,
  publicUrl: "http://vault.test",
  maxValueBytes: 65_536,
  trustProxy: false,
});

const call = (app: { request: (path: string, init: RequestInit) => Response | Promise<Response> }, method: string, path: string, body?: unknown) =>
  app.request(path, {
    method,
    headers: { authorization: `Bearer ${MASTER_KEY}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

/** A stopped SQLite vault with secrets, an org, a key, a webhook and their audit rows. */
async function sqliteVault(): Promise<string> {
  const dir = tempDir("ev-migrate-");
  const db = openDatabase(join(dir, "vault.db"));
  const vault = createSqliteVault(db, { ...common(new ValueCipher(ROOT_KEY)), webhooks: { allowPrivate: true } });
  expect((await call(vault.app, "POST", "/secrets", { key: "db/pass", value: "line1\nüñî ✓", max_reads: 3 })).status).toBe(201);
  expect((await call(vault.app, "GET", "/secrets/db/pass")).status).toBe(200);
  expect((await call(vault.app, "POST", "/secrets", { value: "public one" })).status).toBe(201);
  const org = (await (await call(vault.app, "POST", "/orgs", { name: "acme" })).json()) as { id: string };
  expect((await call(vault.app, "POST", `/orgs/${org.id}/secrets`, { key: "o", value: "org value", delete: false })).status).toBe(201);
  expect((await call(vault.app, "POST", `/orgs/${org.id}/principals`, { name: "ci", role: "reader" })).status).toBe(201);
  expect((await call(vault.app, "POST", "/keys", { name: "ci", permissions: ["read"] })).status).toBe(201);
  expect((await call(vault.app, "POST", "/webhooks", { url: "https://127.0.0.1/hook", events: ["*"] })).status).toBe(201);
  // A clean stop: the read tally written back (store/sqlite/tally/read-tally.ts).
  await vault.engine.close();
  return dir;
}

describePg("migrate --from-sqlite and audit verify on PostgreSQL", () => {
  it("copies a link's reveal check and receipt: after the move the link still needs its proof, and the receipt still answers", async () => {
    const dir = tempDir("ev-migrate-link-");
    const db = openDatabase(join(dir, "vault.db"));
    const before = createSqliteVault(db, common(new ValueCipher(ROOT_KEY)));
    const sealed = await sealEnvelope("the value", {});
    const made = await call(before.app, "POST", "/secrets", { value: sealed.envelope, reveal_check: sealed.revealCheck, max_reads: 2 });
    expect(made.status).toBe(201);
    const { id, receipt } = (await made.json()) as { id: string; receipt: string };
    await before.engine.close();

    const target = await createTestDatabase();
    databases.push(target);
    const counts = await migrateFromSqlite({ dataDir: dir, url: target.url, progress: () => {} });
    expect([counts.reveal_checks, counts.receipts]).toEqual([
      { sqlite: 1, postgres: 1 },
      { sqlite: 1, postgres: 1 },
    ]);
    const cipher = new ValueCipher(ROOT_KEY);
    const pool = await openPgPool({ url: target.url, poolSize: 4 });
    const engine = pgEngineOver(pool, { auditChainKey: cipher.auditChainKeys().get(cipher.currentKeyId) ?? null });
    try {
      const after = createVault(engine, common(cipher));
      const reveal = (body: unknown) => after.app.request(`/s/${id}/reveal`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      // Without the proof: refused, as before the move (a copy without reveal_checks would hand it out).
      expect((await reveal({})).status).toBe(403);
      const { proof } = await prepareReveal(sealed.linkKey, undefined);
      expect((await reveal({ proof })).status).toBe(200);
      const r = await after.app.request(`/receipts/${receipt}`);
      expect(r.status).toBe(200);
      expect(await r.json()).toMatchObject({ state: "opened", read_count: 1, max_reads: 2 });
    } finally {
      await engine.close();
    }
  });

  it("copies everything with ids and ciphertexts, keeps the audit chain verifiable, and goes on from there", async () => {
    const dir = await sqliteVault();
    // The stop wrote the read back into secret_reads (schema.sql version 15), not into the secret's row.
    const file = openDatabase(join(dir, "vault.db"));
    expect(file.prepare("SELECT s.read_count AS row, r.read_count AS side FROM secrets s JOIN secret_reads r ON r.id = s.id WHERE s.key = 'db/pass'").get()).toEqual({
      row: 0,
      side: 1,
    });
    file.close();
    const target = await createTestDatabase();
    databases.push(target);
    const lines: string[] = [];
    const counts = await migrateFromSqlite({ dataDir: dir, url: target.url, progress: (l) => lines.push(l) });
    for (const [table, c] of Object.entries(counts)) expect(c.postgres, table).toBe(c.sqlite);
    expect(counts.secrets?.postgres).toBe(3);
    expect(counts.audit?.postgres).toBeGreaterThan(5);

    const cipher = new ValueCipher(ROOT_KEY);
    const pool = await openPgPool({ url: target.url, poolSize: 4 });
    const engine = pgEngineOver(pool, { auditChainKey: cipher.auditChainKeys().get(cipher.currentKeyId) ?? null });
    try {
      // Statistics right after the load (ANALYZE), not at autovacuum's leisure: the planner knows the copied rows.
      const stats = await pool.query<{ n: number }>("SELECT reltuples::integer AS n FROM pg_class WHERE relname = 'audit'");
      expect(stats.rows[0]?.n).toBe(counts.audit?.postgres);
      const vault = createVault(engine, common(cipher));
      // The ciphertext opens under the same key and AAD: the value is byte for byte the same.
      const read = await call(vault.app, "GET", "/secrets/db/pass");
      expect(read.status).toBe(200);
      expect(await read.json()).toMatchObject({ value: "line1\nüñî ✓", read_count: 2, max_reads: 3 });
      // New rows get new ids after the copied ones, and a second chain.
      expect((await call(vault.app, "POST", "/secrets", { key: "after", value: "v" })).status).toBe(201);
      const keys = cipher.auditChainKeys();
      const full = await verifyPgAuditChains(pool, keys);
      expect(full).toMatchObject({ ok: true, chains: 2 });
      // The console's check (docs/console.md, "Audit"): the copied chain too, then nothing read again.
      expect(await engine.verifyAudit(keys)).toEqual({ ok: true, rows: full.rows, walked: full.rows });
      expect(await engine.verifyAudit(keys)).toEqual({ ok: true, rows: full.rows, walked: 0 });

      // The CLI says the same, and names a tampered row.
      const env = { VAULT_ENCRYPTION_KEY: ROOT_KEY.toString("hex") };
      const ok = runCommand(["audit", "verify", "--database-url", target.url], env);
      expect(ok.code, ok.stderr).toBe(0);
      expect(ok.stdout).toMatch(/^audit chains intact: 2 chains, \d+ rows\n$/);
      await pool.query("ALTER TABLE audit DISABLE TRIGGER audit_no_update");
      await pool.query("UPDATE audit SET key = 'forged' WHERE chain = 'sqlite' AND seq = 2");
      await pool.query("ALTER TABLE audit ENABLE TRIGGER audit_no_update");
      const broken = runCommand(["audit", "verify", "--database-url", target.url], env);
      expect(broken.code).toBe(1);
      expect(broken.stdout).toMatch(/^audit chain sqlite broken at seq 2: /);
      expect(broken.stdout + broken.stderr).not.toContain(new URL(target.url).password);
      // Without the root key the chains do not verify.
      expect(await verifyPgAuditChains(pool, new ValueCipher(Buffer.alloc(32, 9)).auditChainKeys())).toMatchObject({ ok: false });
    } finally {
      await engine.close();
    }
  });

  it("carries each row's value version: replaced values and v2 rows at version 0 read on PostgreSQL, older values pasted back do not", async () => {
    const dir = tempDir("ev-migrate-versions-");
    const cipher = new ValueCipher(ROOT_KEY);
    const db = openDatabase(join(dir, "vault.db"));
    const vault = createSqliteVault(db, common(cipher));
    expect((await call(vault.app, "POST", "/secrets", { key: "replaced", value: "value-1" })).status).toBe(201);
    const first = db.prepare("SELECT ciphertext FROM secrets WHERE key = 'replaced'").get() as { ciphertext: Buffer };
    expect((await call(vault.app, "PUT", "/secrets/replaced", { value: "value-2" })).status).toBe(200);
    expect((await call(vault.app, "PUT", "/secrets/replaced", { value: "value-3" })).status).toBe(200);
    expect((await call(vault.app, "POST", "/secrets", { key: "legacy", value: "placeholder" })).status).toBe(201);
    await vault.engine.tx.close();
    // A row as a build before value versions left it: a v2 envelope (version byte 2, the v2 AAD) at value version 0.
    const legacy = db.prepare("SELECT created_at FROM secrets WHERE key = 'legacy'").get() as { created_at: number };
    const v2 = cipher.encrypt("written-by-v2", aadForRecord({ scope: "global", key: "legacy", createdAt: legacy.created_at }));
    v2[0] = 2;
    db.prepare("UPDATE secrets SET ciphertext = ?, value_version = 0 WHERE key = 'legacy'").run(v2);
    db.close();

    const target = await createTestDatabase();
    databases.push(target);
    await migrateFromSqlite({ dataDir: dir, url: target.url });
    const pool = await openPgPool({ url: target.url, poolSize: 2 });
    const engine = pgEngineOver(pool, { auditChainKey: cipher.auditChainKeys().get(cipher.currentKeyId) ?? null });
    try {
      const versions = await pool.query<{ key: string; value_version: number }>("SELECT key, value_version FROM secrets ORDER BY id");
      expect(versions.rows).toEqual([
        { key: "replaced", value_version: 3 },
        { key: "legacy", value_version: 0 },
      ]);
      const pgVault = createVault(engine, common(cipher));
      expect(await (await call(pgVault.app, "GET", "/secrets/replaced")).json()).toMatchObject({ value: "value-3" });
      expect(await (await call(pgVault.app, "GET", "/secrets/legacy")).json()).toMatchObject({ value: "written-by-v2" });
      await pool.query("UPDATE secrets SET ciphertext = $1 WHERE key = 'replaced'", [first.ciphertext]);
      const pasted = await call(pgVault.app, "GET", "/secrets/replaced");
      expect(pasted.status).toBe(500);
      expect(await pasted.text()).toBe('{"error":"internal server error"}');
    } finally {
      await engine.close();
    }
  });

  it("audit verify --database-url on a vault migrated after a rotation: a missing previous key exits 3, naming it, not 1", async () => {
    const dir = tempDir("ev-migrate-rekeyed-");
    const oldKey = Buffer.alloc(32, 3);
    const newKey = Buffer.alloc(32, 4);
    const db = openDatabase(join(dir, "vault.db"));
    const before = createSqliteVault(db, common(new ValueCipher(oldKey)));
    expect((await call(before.app, "POST", "/secrets", { key: "under/old", value: "v" })).status).toBe(201);
    before.engine.tx.close();
    before.engine.walScrubber.stop();
    expect(rekeyDatabase(db, new ValueCipher(newKey, [oldKey])).remaining).toBe(0);
    const after = createSqliteVault(db, common(new ValueCipher(newKey)));
    expect((await call(after.app, "POST", "/secrets", { key: "under/new", value: "v" })).status).toBe(201);
    after.engine.tx.close();
    after.engine.walScrubber.stop();
    db.close();
    const target = await createTestDatabase();
    databases.push(target);
    const migrated = runCommand(["migrate", "--from-sqlite", dir, "--to", target.url], { VAULT_ENCRYPTION_KEY: newKey.toString("hex") });
    expect(migrated.code, migrated.stderr).toBe(0);

    const onlyNew = runCommand(["audit", "verify", "--database-url", target.url], { VAULT_ENCRYPTION_KEY: newKey.toString("hex") });
    expect(onlyNew.code, onlyNew.stdout + onlyNew.stderr).toBe(3);
    expect(onlyNew.stdout).not.toMatch(/broken/);
    expect(onlyNew.stdout).toContain(rootKeyId(oldKey));
    expect(onlyNew.stdout).toContain("VAULT_PREVIOUS_ENCRYPTION_KEYS");
    const both = runCommand(["audit", "verify", "--database-url", target.url], {
      VAULT_ENCRYPTION_KEY: newKey.toString("hex"),
      VAULT_PREVIOUS_ENCRYPTION_KEYS: oldKey.toString("hex"),
    });
    expect(both.code, both.stdout + both.stderr).toBe(0);
    expect(both.stdout).toMatch(/^audit chains intact/);
  });

  it("refuses a target that is not empty, through the command (exit 2), keeping nothing of the second copy", async () => {
    const dir = await sqliteVault();
    const target = await createTestDatabase();
    databases.push(target);
    const first = runCommand(["migrate", "--from-sqlite", dir, "--to", target.url]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/every table's count matches/);
    expect(first.stdout).not.toContain(new URL(target.url).password);
    const again = runCommand(["migrate", "--from-sqlite", dir, "--to", target.url]);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/not empty/);
    const pool = await openPgPool({ url: target.url, poolSize: 1 });
    try {
      const n = await pool.query<{ n: number }>("SELECT count(*)::integer AS n FROM secrets");
      expect(n.rows[0]?.n).toBe(3);
    } finally {
      await pool.end();
    }
  });
});
