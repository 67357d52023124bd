import { afterAll, expect, it } from "vitest";
import { auditCommand } from "../../../src/cli/admin/audit.js";
import { ValueCipher } from "../../../src/crypto/cipher.js";
import { verifyPgAuditChains } from "../../../src/store/pg/audit/verify.js";
import { createSecretsAtOnce, createTestDatabase, describePg, openTestNode } from "../../support/pg-database.js";
import type { TestDatabase } from "../../support/pg-database.js";

// Authenticated chain heads, the authenticated set of chains, and audit
// anchors on PostgreSQL (docs/audit.md); the SQLite side is test/domain/audit/anchor.sqlite.test.ts.

const ROOT_KEY = Buffer.alloc(32, 5);
const databases: TestDatabase[] = [];
afterAll(async () => {
  for (const db of databases.splice(0)) await db.drop();
});

/** A migrated database with rows in `chains` writer chains (one per concurrent request); the node stays open. */
async function loggedDatabase(requests: number) {
  const target = await createTestDatabase();
  databases.push(target);
  const cipher = new ValueCipher(ROOT_KEY);
  const node = await openTestNode(target.url, cipher, 4);
  const write = (prefix: string, n: number): Promise<void> => createSecretsAtOnce(node, prefix, n);
  await write("k", requests);
  return { target, cipher, pool: node.engine.pool, engine: node.engine, write };
}

async function audit(url: string, args: string[]) {
  const o = { out: "", err: "" };
  const code = await auditCommand([...args, "--database-url", url], { VAULT_ENCRYPTION_KEY: ROOT_KEY.toString("hex") }, {
    out: (t) => (o.out += t),
    err: (t) => (o.err += t),
  });
  return { code, ...o };
}

/** What a superuser can do without the key: lift the append-only guard, delete rows, move heads. */
async function asSuperuser(pool: { query: (sql: string) => Promise<unknown> }, sql: string): Promise<void> {
  await pool.query("ALTER TABLE audit DISABLE TRIGGER USER");
  await pool.query(sql);
  await pool.query("ALTER TABLE audit ENABLE TRIGGER USER");
}

describePg("authenticated audit heads and chain set (PostgreSQL)", () => {
  it("a chain's tail cut off with audit_chains moved back fails verify (exit 1)", async () => {
    const { target, pool, engine } = await loggedDatabase(6);
    try {
      expect((await audit(target.url, ["verify"])).code).toBe(0);
      const longest = (await pool.query<{ chain: string; seq: number }>("SELECT chain, seq FROM audit_chains ORDER BY seq DESC LIMIT 1")).rows[0];
      expect(longest?.seq).toBeGreaterThan(1);
      const chain = longest?.chain as string;
      await asSuperuser(pool, `DELETE FROM audit WHERE chain = '${chain}' AND seq > 1`);
      await pool.query(
        "UPDATE audit_chains c SET seq = 1, hash = a.hash, at = a.at FROM audit a WHERE a.chain = c.chain AND a.seq = 1 AND c.chain = $1",
        [chain],
      );
      const r = await audit(target.url, ["verify"]);
      expect(r.code).toBe(1);
      expect(r.out).toMatch(/recorded head is not authentic/);
    } finally {
      await engine.close();
    }
  });

  it("a chain removed whole, and every chain removed, fail verify", async () => {
    const { target, pool, engine, cipher } = await loggedDatabase(6);
    try {
      const chains = (await pool.query<{ chain: string }>("SELECT chain FROM audit_chains ORDER BY chain")).rows.map((r) => r.chain);
      const first = chains[0] as string;
      await asSuperuser(pool, `DELETE FROM audit WHERE chain = '${first}'`);
      await pool.query("DELETE FROM audit_chains WHERE chain = $1", [first]);
      const one = await verifyPgAuditChains(pool, cipher.auditChainKeys());
      expect(one).toMatchObject({ ok: false, chain: first, reason: expect.stringMatching(/recorded chain is missing/) });
      await asSuperuser(pool, "DELETE FROM audit");
      await pool.query("DELETE FROM audit_chains");
      const r = await audit(target.url, ["verify"]);
      expect(r.code).toBe(1);
      expect(r.out).toMatch(/a recorded chain is missing/);
    } finally {
      await engine.close();
    }
  });

  it("audit head, more rows, verify --anchor holds; a chain cut below the anchor fails", async () => {
    const { target, pool, engine, write } = await loggedDatabase(3);
    try {
      const head = await audit(target.url, ["head"]);
      expect(head.code, head.out).toBe(0);
      expect(head.out).toMatch(/^ephemeral-vault-audit-anchor v1 engine=postgres at=\S+ rows=3 heads=\S+ key=[0-9a-f]{16} mac=[0-9a-f]{64}\n$/);
      await write("more", 3);
      const ok = await audit(target.url, ["verify", "--anchor", head.out.trim()]);
      expect(ok.out).toMatch(/^audit chains intact: \d+ chains, 6 rows; the anchor holds\n$/);
      expect(ok.code).toBe(0);
      // Every chain removed with the set record too: verify alone cannot tell an empty log; the anchor can.
      await asSuperuser(pool, "DELETE FROM audit");
      await pool.query("DELETE FROM audit_chains");
      await pool.query("DELETE FROM meta WHERE name = 'audit_chain_set'");
      expect((await audit(target.url, ["verify"])).code).toBe(0);
      const cut = await audit(target.url, ["verify", "--anchor", head.out.trim()]);
      expect(cut.code).toBe(1);
      expect(cut.out).toMatch(/^audit log does not hold its anchor: chain \S+ is shorter than the anchor/);
    } finally {
      await engine.close();
    }
  });
});
