import Database from "better-sqlite3";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { migrate, schemaSections } from "../../../../src/store/sqlite/migrate.js";
import { MAX_SPAN_IDS, SqliteAuditStore } from "../../../../src/store/sqlite/audit/store.js";
import { allRows, drawnQuery, expectedPage } from "../../../support/audit-pages.js";
import { buildSqliteTestVault } from "../../../support/helpers.js";

// The SQLite audit store answers page queries from spans (schema.sql version 10), not per-row
// indexes. These tests hold its answers to a plain filter over every row of the table, for
// batches and queries drawn at random, and for spans built by the migration from older rows.

const SCOPES = ["global", "org_a", "org_b"];
const ACTIONS = ["secret.read", "secret.created", "key.created", "auth.failed"];
const PUBLIC_ID = "0123456789abcdef".repeat(4);
/** Keys of every kind the store tells apart: none, plain, prefixed, a public id, 64 upper-case hex (a plain key). */
const KEYS = [null, "k1", "k2", "a/x", "a/y", PUBLIC_ID, "0123456789ABCDEF".repeat(4)];

interface Drawn {
  scope: string;
  action: string;
  key: string | null;
  /** Milliseconds the clock moves before the row is recorded. */
  advanceMs: number;
}

const drawnRow = fc.record({
  scope: fc.constantFrom(...SCOPES),
  action: fc.constantFrom(...ACTIONS),
  key: fc.constantFrom(...KEYS),
  advanceMs: fc.constantFrom(0, 0, 1, 700),
});

/** Batches of rows (some over MAX_SPAN_IDS), each with the milliseconds the clock moves before it. */
const drawnBatches = fc.array(fc.record({ advanceMs: fc.integer({ min: 0, max: 3000 }), rows: fc.array(drawnRow, { minLength: 1, maxLength: 100 }) }), {
  minLength: 1,
  maxLength: 12,
});




describe("audit spans (schema.sql version 10)", () => {
  it("answer every page query like a filter over all rows, for rows written in batches through the group commit", async () => {
    await fc.assert(
      fc.asyncProperty(drawnBatches, fc.infiniteStream(fc.nat()), async (batches, seeds) => {
        const v = buildSqliteTestVault();
        const firstAt = v.clock.now();
        for (const batch of batches) {
          v.clock.advance(batch.advanceMs);
          // Queued in one turn: one batch, one COMMIT, one span per scope, action and key. The units
          // run at the flush and move the clock, so a time bound can fall inside a batch's spans.
          const units = batch.rows.map((r: Drawn) =>
            v.tx.run((w) => {
              v.clock.advance(r.advanceMs);
              return v.audit.record(w, { scope: r.scope, action: r.action, key: r.key, actor: "master", principalId: null, ip: null });
            }),
          );
          await Promise.all(units);
        }
        const rows = allRows(v.db);
        const store = new SqliteAuditStore(v.db, null);
        const queries = fc.sample(drawnQuery({ scopes: SCOPES, actions: ACTIONS, keys: fc.option(fc.constantFrom(...KEYS.filter((k) => k !== null)), { nil: null }), firstAt: firstAt, lastAt: v.clock.now(), maxId: rows.length, maxLimit: 60 }), { numRuns: 40, seed: seeds.next().value as number });
        for (const q of queries) expect(store.page(q), JSON.stringify(q)).toEqual(expectedPage(rows, q));
      }),
      { numRuns: 40 },
    );
  });

  it("write one span per scope, per action and per key a batch wrote (per 64 ids), none for public ids", async () => {
    const v = buildSqliteTestVault();
    const record = (scope: string, action: string, key: string | null) =>
      v.tx.run((w) => v.audit.record(w, { scope, action, key, actor: "master", principalId: null, ip: null }));
    await Promise.all([
      record("global", "secret.read", "k1"),
      record("global", "secret.read", "k1"),
      record("org_a", "secret.read", PUBLIC_ID),
      record("global", "secret.created", "k2"),
      record("global", "secret.read", null),
    ]);
    expect(v.db.prepare("SELECT kind, scope, value, lo, hi FROM audit_span ORDER BY kind, scope, value").all()).toEqual([
      { kind: "a", scope: "global", value: "secret.created", lo: 4, hi: 4 },
      { kind: "a", scope: "global", value: "secret.read", lo: 1, hi: 5 },
      { kind: "a", scope: "org_a", value: "secret.read", lo: 3, hi: 3 },
      { kind: "k", scope: "global", value: "k1", lo: 1, hi: 2 },
      { kind: "k", scope: "global", value: "k2", lo: 4, hi: 4 },
      { kind: "s", scope: "global", value: "", lo: 1, hi: 5 },
      { kind: "s", scope: "org_a", value: "", lo: 3, hi: 3 },
    ]);
    // A batch of more than MAX_SPAN_IDS rows of one value gets a span per 64 ids.
    await Promise.all(Array.from({ length: 150 }, () => record("org_b", "secret.read", "k3")));
    expect(v.db.prepare("SELECT kind, lo, hi FROM audit_span WHERE scope = 'org_b' ORDER BY kind, lo").all()).toEqual(
      ["a", "k", "s"].flatMap((kind) => [
        { kind, lo: 6, hi: 6 + MAX_SPAN_IDS - 1 },
        { kind, lo: 6 + MAX_SPAN_IDS, hi: 6 + 2 * MAX_SPAN_IDS - 1 },
        { kind, lo: 6 + 2 * MAX_SPAN_IDS, hi: 155 },
      ]),
    );
    // The spans are as append-only as the rows they point to.
    expect(() => v.db.prepare("DELETE FROM audit_span").run()).toThrow(/append-only/);
    expect(() => v.db.prepare("UPDATE audit_span SET hi = 1").run()).toThrow(/append-only/);
  });

  it("are built by the migration from a version 9 database's rows, which then answer queries like a filter over all rows", () => {
    fc.assert(
      fc.property(fc.array(drawnRow, { minLength: 1, maxLength: 300 }), fc.nat(), (drawn, seed) => {
        const db = new Database(":memory:");
        try {
          for (const section of schemaSections().filter((s) => s.version <= 9)) db.exec(section.sql);
          db.pragma("user_version = 9");
          const insert = db.prepare("INSERT INTO audit (id, scope, at, action, key, actor, principal_id, ip, hash) VALUES (?, ?, ?, ?, ?, 'master', NULL, NULL, 'h')");
          let at = Date.UTC(2026, 0, 1);
          drawn.forEach((r, i) => {
            at += r.advanceMs;
            insert.run(i + 1, r.scope, at, r.action, r.key);
          });
          migrate(db);
          const indexes = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'audit'").all();
          expect(indexes).toEqual([]);
          const rows = allRows(db);
          const store = new SqliteAuditStore(db, null);
          for (const q of fc.sample(drawnQuery({ scopes: SCOPES, actions: ACTIONS, keys: fc.option(fc.constantFrom(...KEYS.filter((k) => k !== null)), { nil: null }), firstAt: Date.UTC(2026, 0, 1), lastAt: at, maxId: rows.length, maxLimit: 60 }), { numRuns: 60, seed })) {
            expect(store.page(q), JSON.stringify(q)).toEqual(expectedPage(rows, q));
          }
        } finally {
          db.close();
        }
      }),
      { numRuns: 50 },
    );
  });
});
