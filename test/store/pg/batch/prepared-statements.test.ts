import { describe, expect, it } from "vitest";
import { prepared } from "../../../../src/store/pg/batch/index.js";

// store/pg/batch/prepared.ts: the rules a prepared statement's declaration enforces (no server needed;
// test/store/pg/prepared.pg.test.ts runs them on PostgreSQL).

describe("prepared()", () => {
  it("declares a named statement once and refuses the same name twice", () => {
    const s = prepared("test.one", "SELECT id FROM secrets WHERE id = $1");
    expect(s).toEqual({ name: "test.one", text: "SELECT id FROM secrets WHERE id = $1" });
    expect(Object.isFrozen(s)).toBe(true);
    expect(() => prepared("test.one", "SELECT id FROM secrets WHERE id = $2")).toThrow(/declared twice/);
  });

  it.each([
    "SELECT * FROM secrets WHERE id = $1",
    "select k.*, p.role FROM principal_keys k JOIN principals p ON p.id = k.principal_id",
    "SELECT id, * FROM secrets",
    "UPDATE secrets SET state = 'sealed' WHERE id = $1 RETURNING *",
  ])("refuses a statement that selects * (its result columns could change under it): %s", (text) => {
    expect(() => prepared(`test.star.${text.length}`, text)).toThrow(/must name its columns/);
  });

  it("accepts count(*) and multiplication, which fix their result columns", () => {
    expect(prepared("test.count", "SELECT count(*)::integer AS n FROM secrets WHERE scope = $1").name).toBe("test.count");
    expect(prepared("test.times", "SELECT read_count * 2 AS twice FROM secrets WHERE id = $1").name).toBe("test.times");
  });
});
