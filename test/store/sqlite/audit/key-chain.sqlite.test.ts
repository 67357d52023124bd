import Database from "better-sqlite3";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { migrate, schemaSections } from "../../../../src/store/sqlite/migrate.js";
import type { AuditPageQuery, } from "../../../../src/store/audit.js";
import { isCheckpoint } from "../../../../src/store/sqlite/audit/key-chain.js";
import { allRows, drawnQuery, expectedPage } from "../../../support/audit-pages.js";
import { buildSqliteTestVault } from "../../../support/helpers.js";
import type { SqliteTestVault } from "../../../support/helpers.js";

// The SQLite audit store finds a key's rows by a chain (each row names the previous row of its
// key, the newest kept in the live secret's row) instead of a key span per batch (schema.sql
// version 13). Whatever happens to the secrets of a key (created, burned, deleted, expired,
// pruned, created again) and whether older rows were written before the upgrade, every query
// answers like a plain filter over every row of the table.

const SCOPES = ["global", "org_a"];
const ACTIONS = ["secret.read", "secret.created", "secret.deleted", "key.created"];
const PUBLIC_ID = "0123456789abcdef".repeat(4);
const KEYS = ["k1", "k2", "a/x", "0123456789ABCDEF".repeat(4)];

/** One unit of work: an audit row, or a change of the key's secret row as the secret lifecycle makes it. */
type Op = { op: "row" | "create" | "delete" | "expire" | "prune"; scope: string; key: string; action: string; advanceMs: number };

const drawnOp: fc.Arbitrary<Op> = fc.record({
  op: fc.constantFrom("row", "row", "row", "row", "create", "delete", "expire", "prune"),
  scope: fc.constantFrom(...SCOPES),
  key: fc.constantFrom(...KEYS, PUBLIC_ID),
  action: fc.constantFrom(...ACTIONS),
  advanceMs: fc.constantFrom(0, 0, 1, 700),
});

/** Batches of units, each queued in one turn (one COMMIT). */
const drawnBatches = fc.array(fc.array(drawnOp, { minLength: 1, maxLength: 30 }), { minLength: 1, maxLength: 10 });

/** Runs one unit: the secret row changes as the store's lifecycle changes it (insert, remove, expire, prune). */
function runOp(v: SqliteTestVault, o: Op): Promise<void> {
  return v.tx.run((w) => {
    v.clock.advance(o.advanceMs);
    const live = v.db.prepare("SELECT id FROM secrets WHERE scope = ? AND key = ? AND state IN ('active', 'sealed')").get(o.scope, o.key) as
      | { id: number }
      | undefined;
    if (o.op === "create" && live === undefined) {
      v.db
        .prepare(`INSERT INTO secrets (scope, key, is_public, state, ciphertext, created_at, updated_at) VALUES (?, ?, ?, 'active', x'00', 0, 0)`)
        .run(o.scope, o.key, o.key === PUBLIC_ID ? 1 : 0);
    } else if (o.op === "delete" && live !== undefined) {
      w.secrets.remove(live.id);
    } else if (o.op === "expire" && live !== undefined) {
      w.secrets.expire(live.id, v.clock.now());
    } else if (o.op === "prune") {
      w.secrets.pruneExpired(o.scope, undefined);
    }
    return v.audit.record(w, { scope: o.scope, action: o.action, key: o.key, actor: "master", principalId: null, ip: null });
  });
}

async function checkQueries(v: SqliteTestVault, firstAt: number, seed: number): Promise<void> {
  const rows = allRows(v.db);
  // The vault's own store: the heads its read tally holds are part of the chain (store/sqlite/tally/read-tally.ts).
  const store = v.sqlite.work.audit;
  for (const q of fc.sample(drawnQuery({ scopes: SCOPES, actions: ACTIONS, keys: fc.constantFrom(...KEYS, PUBLIC_ID), firstAt: firstAt, lastAt: v.clock.now(), maxId: rows.length, maxLimit: 40 }), { numRuns: 40, seed })) {
    expect(store.page(q), JSON.stringify(q)).toEqual(expectedPage(rows, q));
  }
}

/** A database at schema version 12 holding `n` rows as that version wrote them (a span per row and kind), and live secrets of some keys. */
function version12Database(n: number): Database.Database {
  const db = new Database(":memory:");
  for (const section of schemaSections().filter((s) => s.version <= 12)) db.exec(section.sql);
  db.pragma("user_version = 12");
  const insert = db.prepare("INSERT INTO audit (id, scope, at, action, key, actor, principal_id, ip, hash) VALUES (?, ?, ?, ?, ?, 'master', NULL, NULL, 'h')");
  const span = db.prepare("INSERT INTO audit_span (kind, scope, value, lo, hi) VALUES (?, ?, ?, ?, ?)");
  for (let id = 1; id <= n; id++) {
    const scope = SCOPES[id % 2] as string;
    const key = KEYS[id % KEYS.length] as string;
    const action = ACTIONS[id % 3] as string;
    insert.run(id, scope, Date.UTC(2025, 11, 31) + id, action, key);
    span.run("s", scope, "", id, id);
    span.run("a", scope, action, id, id);
    span.run("k", scope, key, id, id);
  }
  db.prepare("INSERT INTO secrets (scope, key, state, ciphertext, created_at, updated_at) VALUES ('global', 'k1', 'active', x'00', 0, 0)").run();
  db.prepare("INSERT INTO secrets (scope, key, state, ciphertext, created_at, updated_at) VALUES ('org_a', 'k2', 'active', x'00', 0, 0)").run();
  return db;
}

describe("a key's audit rows by chain (schema.sql version 13)", () => {
  it("answer every query like a filter over all rows, whatever happens to the key's secrets", async () => {
    await fc.assert(
      fc.asyncProperty(drawnBatches, fc.nat(), async (batches, seed) => {
        const v = buildSqliteTestVault();
        const firstAt = v.clock.now();
        for (const batch of batches) await Promise.all(batch.map((o) => runOp(v, o)));
        await checkQueries(v, firstAt, seed);
      }),
      { numRuns: 60 },
    );
  });

  it("answer like a filter over all rows after an upgrade from version 12, with rows on both sides of it", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 150 }), drawnBatches, fc.nat(), async (n, batches, seed) => {
        const db = version12Database(n);
        migrate(db);
        const v = buildSqliteTestVault({ db });
        const firstAt = Date.UTC(2025, 11, 31);
        for (const batch of batches) await Promise.all(batch.map((o) => runOp(v, o)));
        await checkQueries(v, firstAt, seed);
      }),
      { numRuns: 40 },
    );
  });

  it("a read of a live secret adds no key span (but for a checkpoint row), and its head moves with the secret's row", async () => {
    const v = buildSqliteTestVault();
    for (let i = 0; i < 40; i++) await v.asMaster("POST", "/secrets", { key: `s/${i}`, value: "v" });
    const keySpans = () => v.db.prepare("SELECT count(*) AS n FROM audit_span WHERE kind = 'k'").get() as { n: number };
    const before = keySpans().n;
    const lastId = (v.db.prepare("SELECT max(id) AS id FROM audit").get() as { id: number }).id;
    // One batch of reads of different keys, then reads one at a time.
    const reads = [3, 17, 29, 5, 11].map((i) => v.asMaster("GET", `/secrets/s/${i}`));
    for (const res of await Promise.all(reads)) expect(res.status).toBe(200);
    expect((await v.asMaster("GET", "/secrets/s/23")).status).toBe(200);
    const written = v.db.prepare("SELECT hash FROM audit WHERE id > ?").all(lastId) as { hash: string }[];
    expect(written).toHaveLength(6);
    expect(keySpans().n).toBe(before + written.filter((r) => isCheckpoint(r.hash)).length);
    // In the read tally until written back (v.query writes it back first, as a stop does).
    const [head] = (await v.query("SELECT audit_head AS head FROM secrets WHERE key = 's/23'")) as { head: number }[];
    expect(v.db.prepare("SELECT action, key FROM audit WHERE id = ?").get(head?.head)).toEqual({ action: "secret.read", key: "s/23" });
  });

  it("a key reused after a burn and a delete keeps its whole history, newest first, across pages", async () => {
    const v = buildSqliteTestVault();
    await v.asMaster("POST", "/secrets", { key: "db", value: "one", max_reads: 1 });
    await v.asMaster("GET", "/secrets/db");
    await v.asMaster("GET", "/secrets/db");
    await v.asMaster("POST", "/secrets", { key: "db", value: "two" });
    await v.asMaster("GET", "/secrets/db");
    await v.asMaster("DELETE", "/secrets/db");
    await v.asMaster("POST", "/secrets", { key: "db", value: "three" });
    const actions: string[] = [];
    let cursor: string | undefined;
    do {
      const res = await v.asMaster("GET", `/audit?key=db&limit=2${cursor === undefined ? "" : `&cursor=${cursor}`}`);
      const body = (await res.json()) as { entries: { action: string }[]; next_cursor?: string };
      actions.push(...body.entries.map((e) => e.action));
      cursor = body.next_cursor;
    } while (cursor !== undefined);
    const expected = (v.db.prepare("SELECT action FROM audit WHERE key = 'db' ORDER BY id DESC").all() as { action: string }[]).map((r) => r.action);
    expect(actions).toEqual(expected);
    expect(actions).toEqual(["secret.created", "secret.deleted", "secret.read", "secret.created", "secret.burned", "secret.read", "secret.created"]);
  });

  it("page deep into a long key history from a checkpoint, like a filter over all rows", async () => {
    const v = buildSqliteTestVault();
    v.db.prepare("INSERT INTO secrets (scope, key, state, ciphertext, created_at, updated_at) VALUES ('global', 'hot', 'active', x'00', 0, 0)").run();
    for (let b = 0; b < 30; b++) {
      await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          v.tx.run((w) => v.audit.record(w, { scope: "global", action: i % 5 === 0 ? "secret.read" : "key.created", key: i % 7 === 0 ? "other" : "hot", actor: "master", principalId: null, ip: null })),
        ),
      );
      v.clock.advance(1000);
    }
    const rows = allRows(v.db);
    const checkpoints = (v.db.prepare("SELECT count(*) AS n FROM audit_span WHERE kind = 'k' AND value = 'hot'").get() as { n: number }).n;
    // About one row in 64 of the 1,285 rows of the key (an HMAC's last byte); far from 0 and from every row.
    expect(checkpoints).toBeGreaterThan(2);
    expect(checkpoints).toBeLessThan(100);
    const store = v.sqlite.work.audit;
    for (const beforeId of [1500, 1000, 700, 333, 64, 2]) {
      for (const action of [null, "secret.read"]) {
        const q: AuditPageQuery = { scope: "global", sinceMs: undefined, untilMs: undefined, beforeId, action, key: "hot", keyPrefix: null, limit: 25 };
        expect(store.page(q), JSON.stringify(q)).toEqual(expectedPage(rows, q));
      }
    }
  });
});
