import { describe, expect, it } from "vitest";
import { openDatabase } from "../../../src/store/sqlite/db.js";
import { SqliteExecutor } from "../../../src/store/sqlite/executor.js";
import { Fragment, named, render, paramsOf, sql } from "../../../src/store/sql/template.js";
import { map, unique } from "../../../src/store/sql/executor.js";
import { VaultError } from "../../../src/model/errors.js";

// store/sql/template.ts: one statement text per call site, rendered per engine (no server needed;
// the engine-neutral stores run on PostgreSQL in the pg-matrix project).

const SEQ = new Fragment("rowid", "seq");
const at = (id: string, after: number) => sql`SELECT ${SEQ} AS seq FROM orgs WHERE id = ${id} AND ${SEQ} > ${after}`;

describe("the sql tag", () => {
  it("renders ? on SQLite and $n on PostgreSQL, inlining fragments and binding everything else", () => {
    const q = at("o1", 5);
    expect(render(q, "sqlite").text).toBe("SELECT rowid AS seq FROM orgs WHERE id = ? AND rowid > ?");
    expect(render(q, "pg").text).toBe("SELECT seq AS seq FROM orgs WHERE id = $1 AND seq > $2");
    expect(paramsOf(q, render(q, "pg"))).toEqual(["o1", 5]);
  });

  it("renders a call site once: the same text object for every call", () => {
    expect(render(at("a", 1), "pg")).toBe(render(at("b", 2), "pg"));
    expect(paramsOf(at("b", 2), render(at("a", 1), "sqlite"))).toEqual(["b", 2]);
  });

  it("binds a value that looks like SQL as a value, never as text", () => {
    const hostile = "x' OR 1=1 --";
    const q = sql`SELECT ${hostile} AS v`;
    expect(render(q, "sqlite").text).toBe("SELECT ? AS v");
    const x = new SqliteExecutor(openDatabase(":memory:"));
    expect(x.get<{ v: string }>(q)).toEqual({ v: hostile });
  });

  it("refuses a prepared statement name declared twice", () => {
    named("test.template.once");
    expect(() => named("test.template.once")).toThrow(/declared twice/);
  });
});

describe("the SQLite executor", () => {
  it("answers synchronously, and unique() turns a unique violation into a conflict", () => {
    const db = openDatabase(":memory:");
    db.exec("CREATE TABLE t (name TEXT UNIQUE, value TEXT)");
    const x = new SqliteExecutor(db);
    const insert = (name: string) => unique(x, "taken", () => x.run(sql`INSERT INTO t (name, value) VALUES (${name}, ${"v"})`));
    expect(insert("a")).toBe(1);
    expect(map(x.get<{ value: string }>(sql`SELECT value FROM t WHERE name = ${"a"}`), (r) => r?.value)).toBe("v");
    let err: unknown;
    try {
      insert("a");
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(VaultError);
    expect((err as VaultError).message).toBe("taken");
  });
});
