/**
 * SQLite migrations (store/sqlite/migrate.ts over store/schema-sections.ts
 * sectionsToApply, the selection both engines share): sections above the
 * database's user_version are applied once; a database a newer build wrote is
 * refused and left as it is (docs/operations.md, upgrading). The PostgreSQL
 * twin is in pg-engine.pg.test.ts and pg-migrate.pg.test.ts.
 */
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { latestSchemaVersion, migrate } from "../../../src/store/sqlite/migrate.js";
import { sectionsToApply } from "../../../src/store/schema-sections.js";

const SECTIONS = [
  { version: 1, sql: "CREATE TABLE a (x);\n" },
  { version: 2, sql: "CREATE TABLE b (x);\n" },
];

describe("schema migrations", () => {
  it("select the sections above the recorded version, in order", () => {
    expect(sectionsToApply(SECTIONS, 0).map((s) => s.version)).toEqual([1, 2]);
    expect(sectionsToApply(SECTIONS, 1).map((s) => s.version)).toEqual([2]);
    expect(sectionsToApply(SECTIONS, 2)).toEqual([]);
  });

  it("refuse a version above the last section", () => {
    expect(() => sectionsToApply(SECTIONS, 3)).toThrow("the database has schema version 3, newer than this ephemeral-vault (2); upgrade ephemeral-vault");
  });

  it("bring a SQLite database to the latest version once, and refuse one a newer build wrote, changing nothing", () => {
    const db = new Database(":memory:");
    migrate(db);
    const latest = latestSchemaVersion();
    expect(db.pragma("user_version", { simple: true })).toBe(latest);
    const tables = db.prepare("SELECT name FROM sqlite_master ORDER BY name").all();
    migrate(db);
    expect(db.prepare("SELECT name FROM sqlite_master ORDER BY name").all()).toEqual(tables);
    db.pragma(`user_version = ${latest + 1}`);
    expect(() => migrate(db)).toThrow(`the database has schema version ${latest + 1}, newer than this ephemeral-vault (${latest}); upgrade ephemeral-vault`);
    expect(db.pragma("user_version", { simple: true })).toBe(latest + 1);
    db.close();
  });
});
