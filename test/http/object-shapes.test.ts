import { setFlagsFromString } from "node:v8";
import { describe, expect, it } from "vitest";
import type { SecretMeta } from "../../src/domain/secrets/model.js";
import { metaJson, named, orgListEntry, readJson } from "../../src/http/routes/secrets/secret-route.js";

/**
 * The response bodies of the secret routes (src/http/routes/secrets/secret-route.ts) share
 * one V8 map per kind of body. A body built by a leading object spread with
 * properties after it (`{ ...nameOf(s), value }`) gets a new map every time
 * on Node.js 20, which cost about 6 us per body and kept garbage alive into
 * the old generation (docs/performance-log.md, round seven). `%HaveSameMap` is
 * V8's own test of that, enabled here with --allow-natives-syntax for the
 * functions compiled after the flag is set.
 */
setFlagsFromString("--allow-natives-syntax");
const sameMap = new Function("a", "b", "return %HaveSameMap(a, b)") as (a: object, b: object) => boolean;

const DAY_MS = 86_400_000;

/** A secret's metadata; `i` varies every field a body shows, including nulls and times past 2^30 seconds. */
function meta(i: number, isPublic: boolean): SecretMeta {
  return {
    scope: "global",
    key: isPublic ? `${"ab".repeat(32).slice(0, 60)}${String(i).padStart(4, "0")}` : `app/key-${i}`,
    isPublic,
    state: "active",
    createdAt: 1_790_000_000_000 + i * 1_001,
    expiresAt: i % 3 === 0 ? null : 1_790_000_000_000 + i * DAY_MS,
    maxReads: i % 2 === 0 ? null : i + 1,
    readCount: i % 7,
    burnOnLimit: i % 2 === 0,
    ownerId: i % 5 === 0 ? null : `prn_${i}`,
    allowedKeys: null,
  };
}

/** Builds `count` bodies after a warm-up over the same variety, so field representations have settled. */
function bodies<T extends object>(build: (i: number) => T, count = 200): T[] {
  for (let i = 0; i < 50; i++) build(i);
  return Array.from({ length: count }, (_, i) => build(1_000 + i));
}

function expectOneMap(objects: object[]): void {
  const first = objects[0] as object;
  const others = objects.filter((o) => !sameMap(first, o)).length;
  expect(others).toBe(0);
}

describe("secret response bodies keep one map per kind", () => {
  it("the natives check is live: two objects of different shapes have different maps", () => {
    expect(sameMap({ a: 1 }, { a: 2 })).toBe(true);
    expect(sameMap({ a: 1 }, { b: 1 })).toBe(false);
  });

  it("a read's body, for named and for public secrets", () => {
    expectOneMap(bodies((i) => readJson(meta(i, false), `value-${i}`)));
    expectOneMap(bodies((i) => readJson(meta(i, true), `value-${i}`)));
  });

  it("the metadata of create, list and PATCH answers, and an org list entry", () => {
    expectOneMap(bodies((i) => metaJson(meta(i, false))));
    expectOneMap(bodies((i) => metaJson(meta(i, true))));
    expectOneMap(bodies((i) => orgListEntry(meta(i, false))));
    expectOneMap(bodies((i) => named(meta(i, false), { updated: true })));
  });

  it("keeps the answer's field order: the name first, then the fields in order", () => {
    const s = meta(1, false);
    expect(Object.keys(readJson(s, "v"))).toEqual(["key", "value", "created_at", "expires_at", "max_reads", "read_count"]);
    expect(JSON.parse(JSON.stringify(readJson(s, "v")))).toEqual({
      key: "app/key-1",
      value: "v",
      created_at: Math.floor(s.createdAt / 1000),
      expires_at: Math.floor((s.expiresAt as number) / 1000),
      max_reads: 2,
      read_count: 1,
    });
    expect(Object.keys(metaJson(meta(2, true)))).toEqual(["id", "created_at", "expires_at", "max_reads", "read_count"]);
    expect(Object.keys(orgListEntry(s))).toEqual([
      "key",
      "created_at",
      "expires_at",
      "max_reads",
      "read_count",
      "owner_id",
      "state",
      "delete",
    ]);
  });
});
