import { afterAll, expect, it } from "vitest";
import { ValueCipher } from "../../../../src/crypto/cipher.js";
import { HASH_MISMATCH, TAIL_MISSING } from "../../../../src/model/audit/walk.js";
import { verifyPgAuditChains } from "../../../../src/store/pg/audit/verify.js";
import type { PgEngine } from "../../../../src/store/pg/index.js";
import { createSecretsAtOnce, createTestDatabase, describePg, openTestNode } from "../../../support/pg-database.js";
import type { TestDatabase } from "../../../support/pg-database.js";

// The console's audit check on PostgreSQL (docs/console.md, "Audit"; store/pg/engine.ts
// verifyAudit): each chain from the state this node verified last, through the same per-page walk
// as `audit verify`'s full walk (store/pg/audit/verify.ts). The full walk's own tests are
// test/domain/audit/anchor.pg.test.ts and test/store/pg/migrate.pg.test.ts.

const ROOT_KEY = Buffer.alloc(32, 7);
const cipher = new ValueCipher(ROOT_KEY);
const keys = cipher.auditChainKeys();
const databases: TestDatabase[] = [];
const engines: PgEngine[] = [];
afterAll(async () => {
  for (const e of engines.splice(0)) await e.close();
  for (const db of databases.splice(0)) await db.drop();
});

type Node = Awaited<ReturnType<typeof openTestNode>>;

const write = (node: Node, prefix: string, n: number): Promise<void> => createSecretsAtOnce(node, prefix, n);

/** A fresh database and a node of 4 pooled clients on it. */
async function freshNode(): Promise<{ target: TestDatabase; node: Node }> {
  const target = await createTestDatabase();
  databases.push(target);
  const node = await openTestNode(target.url, cipher, 4);
  engines.push(node.engine);
  return { target, node };
}

const count = async (node: Node, where = "true"): Promise<number> =>
  (await node.engine.pool.query<{ n: number }>(`SELECT count(*)::integer AS n FROM audit WHERE ${where}`)).rows[0]?.n ?? -1;

/** What a superuser can do without the key: lift the append-only guard for one statement. */
async function asSuperuser(node: Node, sql: string, params: unknown[] = []): Promise<void> {
  await node.engine.pool.query("ALTER TABLE audit DISABLE TRIGGER USER");
  try {
    await node.engine.pool.query(sql, params);
  } finally {
    await node.engine.pool.query("ALTER TABLE audit ENABLE TRIGGER USER");
  }
}

describePg("the console's incremental audit check (PostgreSQL)", () => {
  it("a second view reads only the rows written since the first, and answers as the full walk does", async () => {
    const { node } = await freshNode();
    await write(node, "a", 12);
    const total = await count(node);
    const first = await node.engine.verifyAudit(keys);
    expect(first).toEqual({ ok: true, rows: total, walked: total });
    expect(await node.engine.verifyAudit(keys)).toEqual({ ok: true, rows: total, walked: 0 });
    await write(node, "b", 9);
    const now = await count(node);
    expect(now).toBeGreaterThan(total);
    const third = await node.engine.verifyAudit(keys);
    expect(third).toEqual({ ok: true, rows: now, walked: now - total });
    // The full walk of the same log: every row, the same answer.
    const full = await verifyPgAuditChains(node.engine.pool, keys);
    expect(full).toMatchObject({ ok: true, rows: now, walked: now });
  });

  it("goes on along a chain that grew by a whole page of rows in one unit of work", async () => {
    const { node } = await freshNode();
    const entry = { scope: "global", action: "test.row", key: null, actor: "master", principalId: null, ip: null };
    const unit = (n: number) =>
      node.vault.tx.run(async (w) => {
        for (let i = 0; i < n; i++) await node.vault.audit.record(w, entry);
      });
    await unit(1000);
    const first = await node.engine.verifyAudit(keys);
    expect(first).toEqual({ ok: true, rows: 1000, walked: 1000 });
    expect(await node.engine.verifyAudit(keys)).toEqual({ ok: true, rows: 1000, walked: 0 });
    await unit(1000);
    expect(await node.engine.verifyAudit(keys)).toEqual({ ok: true, rows: 2000, walked: 1000 });
  });

  it("finds a row altered after the first view in the part written since; a break is not cached", async () => {
    const { node } = await freshNode();
    await write(node, "a", 8);
    const verified = await count(node);
    expect(await node.engine.verifyAudit(keys)).toMatchObject({ ok: true, walked: verified });
    await write(node, "b", 8);
    const newest = (await node.engine.pool.query<{ id: number; chain: string; seq: number }>("SELECT id, chain, seq FROM audit ORDER BY id DESC LIMIT 1")).rows[0];
    if (newest === undefined) throw new Error("no rows");
    await asSuperuser(node, "UPDATE audit SET key = 'forged' WHERE id = $1", [newest.id]);
    const broken = await node.engine.verifyAudit(keys);
    expect(broken).toMatchObject({ ok: false, at: `${newest.chain}#${newest.seq}`, reason: HASH_MISMATCH });
    const full = await verifyPgAuditChains(node.engine.pool, keys);
    expect(full).toMatchObject({ ok: false, chain: newest.chain, seq: newest.seq, reason: HASH_MISMATCH });
    // The next view walks again from the last good state: the same rows, the same break.
    const again = await node.engine.verifyAudit(keys);
    expect(again).toEqual(broken);
    expect(again.walked).toBeLessThan(await count(node));
  });

  it("does not read again a row it verified: one altered there is found by the full walk (audit verify)", async () => {
    const { node } = await freshNode();
    await write(node, "a", 6);
    expect(await node.engine.verifyAudit(keys)).toMatchObject({ ok: true });
    const oldest = (await node.engine.pool.query<{ id: number; chain: string; seq: number }>("SELECT id, chain, seq FROM audit WHERE seq = 2 ORDER BY id LIMIT 1")).rows[0];
    if (oldest === undefined) throw new Error("no rows");
    await asSuperuser(node, "UPDATE audit SET key = 'forged' WHERE id = $1", [oldest.id]);
    expect(await node.engine.verifyAudit(keys)).toMatchObject({ ok: true, walked: 0 });
    expect(await verifyPgAuditChains(node.engine.pool, keys)).toMatchObject({ ok: false, chain: oldest.chain, seq: oldest.seq, reason: HASH_MISMATCH });
  });

  it("finds a head moved back over rows it verified, to an older authentic head or to a forged one", async () => {
    const { node } = await freshNode();
    const heads = async () =>
      (await node.engine.pool.query<{ chain: string; seq: number; hash: string; at: number; mac: string }>("SELECT chain, seq, hash, at, mac FROM audit_chains")).rows;
    await write(node, "a", 4);
    const older = await heads();
    await write(node, "b", 12);
    expect(await node.engine.verifyAudit(keys)).toMatchObject({ ok: true });
    // A chain that grew since `older`: put it back to that head, its own authentic state, rows above it gone.
    const now = await heads();
    const back = older.find((h) => (now.find((n) => n.chain === h.chain)?.seq ?? 0) > h.seq);
    if (back === undefined) throw new Error("no chain grew");
    await asSuperuser(node, "DELETE FROM audit WHERE chain = $1 AND seq > $2", [back.chain, back.seq]);
    await node.engine.pool.query("UPDATE audit_chains SET seq = $2, hash = $3, at = $4, mac = $5 WHERE chain = $1", [back.chain, back.seq, back.hash, back.at, back.mac]);
    expect(await node.engine.verifyAudit(keys)).toMatchObject({ ok: false, at: `${back.chain}#${back.seq + 1}`, reason: TAIL_MISSING, walked: 0 });
    // A head moved back with a MAC that does not hold: not authentic.
    await node.engine.pool.query("UPDATE audit_chains SET mac = $2 WHERE chain = $1", [back.chain, "0".repeat(64)]);
    expect(await node.engine.verifyAudit(keys)).toMatchObject({ ok: false, at: `${back.chain}#${back.seq}`, reason: expect.stringMatching(/recorded head is not authentic/) });
  });

  it("finds a row inserted past a verified chain's head that did not move (the trigger lets INSERT through)", async () => {
    const { node } = await freshNode();
    await write(node, "a", 6);
    expect(await node.engine.verifyAudit(keys)).toMatchObject({ ok: true });
    const head = (await node.engine.pool.query<{ chain: string; seq: number; at: number }>("SELECT chain, seq, at FROM audit_chains ORDER BY chain LIMIT 1")).rows[0];
    if (head === undefined) throw new Error("no chain");
    await node.engine.pool.query("INSERT INTO audit (scope, at, action, chain, seq, hash) VALUES ('global', $1, 'secret.read', $2, $3, $4)", [
      head.at,
      head.chain,
      head.seq + 1,
      "0".repeat(64),
    ]);
    expect(await node.engine.verifyAudit(keys)).toMatchObject({ ok: false, at: `${head.chain}#${head.seq + 1}`, reason: HASH_MISMATCH, walked: 1 });
    expect(await verifyPgAuditChains(node.engine.pool, keys)).toMatchObject({ ok: false, chain: head.chain, seq: head.seq + 1, reason: HASH_MISMATCH });
  });

  it("finds, at every view, rows of a chain whose head was removed (an index seek per chain, both walks)", async () => {
    const { node } = await freshNode();
    await write(node, "a", 6);
    expect(await node.engine.verifyAudit(keys)).toMatchObject({ ok: true });
    const chain = (await node.engine.pool.query<{ chain: string }>("SELECT chain FROM audit_chains ORDER BY chain DESC LIMIT 1")).rows[0]?.chain;
    await node.engine.pool.query("DELETE FROM audit_chains WHERE chain = $1", [chain]);
    const broken = { ok: false, at: `${chain}#1`, reason: "rows of a chain without a recorded head", walked: 0 };
    expect(await node.engine.verifyAudit(keys)).toMatchObject(broken);
    expect(await verifyPgAuditChains(node.engine.pool, keys)).toMatchObject({ ok: false, chain, seq: 1, reason: broken.reason });
  });

  it("walks a chain that is new since the last view from its first row, and finds a break in it", async () => {
    const { target, node } = await freshNode();
    await write(node, "a", 6);
    expect(await node.engine.verifyAudit(keys)).toMatchObject({ ok: true });
    // A second node writes: its chains are new to the first node's check.
    const other = await openTestNode(target.url, cipher, 2);
    engines.push(other.engine);
    await write(other, "b", 3);
    const theirs = await count(other, `chain LIKE '${other.engine.nodeId}/%'`);
    expect(theirs).toBeGreaterThan(0);
    const seen = await node.engine.verifyAudit(keys);
    expect(seen).toEqual({ ok: true, rows: await count(node), walked: theirs });
    expect(await verifyPgAuditChains(node.engine.pool, keys)).toMatchObject({ ok: true, rows: seen.rows });
    // A third node's chain, its first row altered before the first node ever saw it: found at that row.
    const third = await openTestNode(target.url, cipher, 1);
    engines.push(third.engine);
    await write(third, "c", 2);
    const chain = `${third.engine.nodeId}/0`;
    await asSuperuser(third, "UPDATE audit SET actor = 'forged' WHERE chain = $1 AND seq = 1", [chain]);
    // (A first row that holds under no loaded key: the chain's key is found by its first row.)
    const reason = expect.stringMatching(/not keyed with any loaded root key/);
    expect(await node.engine.verifyAudit(keys)).toMatchObject({ ok: false, at: `${chain}#1`, reason });
    expect(await verifyPgAuditChains(node.engine.pool, keys)).toMatchObject({ ok: false, chain, seq: 1, reason });
  });
});
