import { describe, expect, it } from "vitest";
import { GENESIS_HASH, macOf, rowHash } from "../../../src/model/audit/chain.js";
import type { ChainSegment } from "../../../src/model/audit/chain.js";
import { ChainWalk, HASH_MISMATCH, checkSegments, discoveredKey, segmentKeys } from "../../../src/model/audit/walk.js";
import type { WalkRow } from "../../../src/model/audit/walk.js";

// The shared walk (model/audit/walk.ts) on its own: rows built here, no engine.
const keyA = Buffer.alloc(32, 1);
const keyB = Buffer.alloc(32, 2);

/** A valid chain of `n` rows, row i hashed under keyOf(i). */
function chain(n: number, keyOf: (position: number) => Buffer | null): WalkRow[] {
  const out: WalkRow[] = [];
  let prev = GENESIS_HASH;
  for (let i = 1; i <= n; i += 1) {
    const content = { id: i, scope: "global", at: 1000 + i, action: "secret.create", key: `k${i}`, actor: "master", principal_id: null, ip: null, count: null };
    const hash = rowHash(prev, content, keyOf(i));
    out.push({ position: i, at: content.at, hash, content });
    prev = hash;
  }
  return out;
}

function walkAll(walk: ChainWalk, rows: readonly WalkRow[]) {
  for (const row of rows) {
    const broken = walk.step(row);
    if (broken !== undefined) return broken;
  }
  return undefined;
}

const segments: ChainSegment[] = [
  { from: 1, key: null },
  { from: 3, key: "a" },
  { from: 5, key: "b" },
];
const keyOf = (i: number) => (i < 3 ? null : i < 5 ? keyA : keyB);

describe("the shared audit walk", () => {
  it("verifies plain and keyed segments and ends at the last row", () => {
    const rows = chain(6, keyOf);
    const walk = new ChainWalk(segmentKeys(segments, new Map([["a", keyA], ["b", keyB]]), ""));
    expect(walkAll(walk, rows)).toBeUndefined();
    expect(walk.rows).toBe(6);
    expect(walk.endsAt(6, (rows[5] as WalkRow).hash)).toBe(true);
    expect(walk.endsAt(5, (rows[4] as WalkRow).hash)).toBe(false);
  });

  it("reports an edited row with its position and the rows before it", () => {
    const rows = chain(6, keyOf);
    (rows[3] as WalkRow).content.key = "edited";
    const walk = new ChainWalk(segmentKeys(segments, new Map([["a", keyA], ["b", keyB]]), ""));
    expect(walkAll(walk, rows)).toEqual({ at: 4, reason: HASH_MISMATCH });
    expect(walk.rows).toBe(3);
  });

  it("names the missing key of a segment whose root key is not loaded", () => {
    const walk = new ChainWalk(segmentKeys(segments, new Map([["b", keyB]]), " (hint)"));
    expect(walkAll(walk, chain(6, keyOf))).toEqual({
      at: 3,
      reason: "rows from here are keyed with root key a, which is not loaded (hint)",
      missingKey: { keyId: "a", setting: "VAULT_PREVIOUS_ENCRYPTION_KEYS" },
    });
  });

  it("finds a chain's key by its first row, and reports a gap in positions when gapless", () => {
    const rows = chain(4, () => keyB);
    expect(walkAll(new ChainWalk(discoveredKey(new Map([["a", keyA], ["b", keyB]])), true), rows)).toBeUndefined();
    expect(walkAll(new ChainWalk(discoveredKey(new Map([["a", keyA]])), true), rows)?.reason).toMatch(/not keyed with any loaded root key/);
    expect(walkAll(new ChainWalk(discoveredKey(new Map([["b", keyB]])), true), [rows[0], rows[2]] as WalkRow[])).toEqual({
      at: 2,
      reason: "a row is missing (seq has a gap)",
    });
  });

  it("checks a segment record: keyed, its last key loaded, its MAC authentic", () => {
    const keys = new Map([["a", keyA], ["b", keyB]]);
    const record = { segments, mac: macOf(keyB, segments, true), signedHeads: true };
    expect(checkSegments(record, keys)).toMatchObject({ ok: true, last: { from: 5, key: "b" } });
    expect(checkSegments({ ...record, signedHeads: false }, keys)).toEqual({ ok: false, problem: "not-authentic" });
    expect(checkSegments(record, new Map([["a", keyA]]))).toEqual({ ok: false, problem: "key-not-loaded", last: { from: 5, key: "b" } });
    expect(checkSegments({ segments: [{ from: 1, key: null }], mac: "", signedHeads: false }, keys)).toEqual({ ok: false, problem: "not-keyed" });
  });
});
