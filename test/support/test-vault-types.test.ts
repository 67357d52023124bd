import { describe, expect, it } from "vitest";
import { SqliteEngine } from "../../src/store/sqlite/engine.js";
import { buildSqliteTestVault, buildTestVault, itSqlite, TEST_ENGINE } from "./helpers.js";
import type { SqliteTestVault, TestVault } from "./helpers.js";

// The test vault is typed per engine (docs/testing.md, "A test for one engine"):
// buildTestVault() gives the handles every engine has, buildSqliteTestVault()
// adds SQLite's. The `@ts-expect-error` lines are the type-level half of this
// file: `npx tsc --noEmit` (tsconfig.json includes test/) fails when one of
// them compiles, that is when the neutral vault hands out a SQLite handle.

/** Reaches for SQLite's handles on the neutral vault: none of these may compile. */
function reachesSqlite(v: TestVault): unknown[] {
  return [
    // @ts-expect-error the neutral test vault has no SQLite database
    v.db,
    // @ts-expect-error the neutral test vault has no SQLite engine
    v.sqlite,
    // @ts-expect-error its engine is the neutral Engine, not SqliteEngine
    v.engine.db,
  ];
}

/** The SQLite test vault's handles, typed. */
function sqliteHandles(v: SqliteTestVault): [SqliteEngine, unknown] {
  return [v.sqlite, v.db.prepare("SELECT 1 AS one").get()];
}

describe("the test vault, typed per engine", () => {
  it("buildTestVault() carries no SQLite handle at run time either, on either engine", async () => {
    const v = buildTestVault();
    expect(reachesSqlite(v)).toEqual([undefined, undefined, TEST_ENGINE === "sqlite" ? expect.anything() : undefined]);
    expect("db" in v).toBe(false);
    expect("sqlite" in v).toBe(false);
    // What it has works on both: requests, and raw SQL through query.
    expect((await v.asMaster("PUT", "/secrets/typed", { value: "x" })).status).toBe(201);
    expect(await v.query("SELECT key FROM secrets")).toEqual([{ key: "typed" }]);
  });

  itSqlite("buildSqliteTestVault() hands out the SQLite engine and its database", async () => {
    const v = buildSqliteTestVault();
    const [engine, row] = sqliteHandles(v);
    expect(engine).toBeInstanceOf(SqliteEngine);
    expect(engine).toBe(v.engine);
    expect(row).toEqual({ one: 1 });
    expect((await v.asMaster("PUT", "/secrets/typed", { value: "x" })).status).toBe(201);
    expect(v.db.prepare("SELECT key FROM secrets").all()).toEqual([{ key: "typed" }]);
  });

  it.runIf(TEST_ENGINE === "pg")("buildSqliteTestVault() refuses to build on PostgreSQL, naming the fix", () => {
    expect(() => buildSqliteTestVault()).toThrow(/buildSqliteTestVault\(\) on PostgreSQL.*\.sqlite\.test\.ts.*itSqlite/);
  });
});
