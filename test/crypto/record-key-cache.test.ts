import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DecryptError, RECORD_KEY_CACHE, ValueCipher, generateRootKey } from "../../src/crypto/cipher.js";
import type { RecordPlace } from "../../src/crypto/cipher.js";

// The record key cache (VAULT_RECORD_KEY_CACHE, docs/configuration.md): bounded by its setting
// whatever the number of records, and invisible in what opens: a cipher that caches answers every
// decryption exactly as one that keeps no key, for the right row, a replaced secret of the same key
// (a new creation time), an older value of the same row (a replace: a new value version), another
// key's row, altered bytes and a root key rotated away.

const place = (key: string, createdAt: number): RecordPlace => ({ scope: "global", key, createdAt, valueVersion: 1 });

/** The plaintext, or the DecryptError's message. */
function outcome(cipher: ValueCipher, envelope: Buffer, where: RecordPlace): string {
  try {
    return `ok:${cipher.decryptRecord(envelope, where)}`;
  } catch (err) {
    if (!(err instanceof DecryptError)) throw err;
    return `refused:${err.message}`;
  }
}

describe("the record key cache", () => {
  it("never holds more keys than its setting, and the default is bounded too", () => {
    for (const size of [0, 1, 7, 64]) {
      const cipher = new ValueCipher(generateRootKey(), [], { recordKeyCache: size });
      const envelopes: Buffer[] = [];
      for (let i = 0; i < 200; i++) {
        envelopes.push(cipher.encryptRecord(`v${i}`, place(`k${i}`, i)));
        expect(cipher.cachedRecordKeys).toBeLessThanOrEqual(size);
        const j = (i * 7) % envelopes.length;
        expect(cipher.decryptRecord(envelopes[j] as Buffer, place(`k${j}`, j))).toBe(`v${j}`);
        expect(cipher.cachedRecordKeys).toBeLessThanOrEqual(size);
      }
      expect(cipher.cachedRecordKeys).toBe(size);
    }
    const cipher = new ValueCipher(generateRootKey());
    for (let i = 0; i < RECORD_KEY_CACHE + 100; i++) cipher.encryptRecord("v", place(`k${i}`, i));
    expect(cipher.cachedRecordKeys).toBe(RECORD_KEY_CACHE);
  });

  it("opens exactly what a cipher without a cache opens: replaced, moved, altered and rotated-away values stay refused", () => {
    const oldRoot = generateRootKey();
    const root = generateRootKey();
    // Values written under the old root key, and under the current one (after a rotation).
    const before = new ValueCipher(oldRoot);
    const op = fc.record({
      record: fc.nat({ max: 11 }),
      what: fc.constantFrom("right", "replaced", "rewritten", "moved", "altered", "old-root"),
      byte: fc.nat({ max: 200 }),
    });
    fc.assert(
      fc.property(fc.constantFrom(1, 3, 4096), fc.array(op, { minLength: 1, maxLength: 80 }), (size, ops) => {
        const cached = new ValueCipher(root, [oldRoot], { recordKeyCache: size });
        const uncached = new ValueCipher(root, [oldRoot], { recordKeyCache: 0 });
        const rotated = new ValueCipher(root, [], { recordKeyCache: size });
        const records = Array.from({ length: 12 }, (_, i) => ({
          where: place(`k${i}`, 1000 + i),
          envelope: (i % 3 === 0 ? before : cached).encryptRecord(`value-${i}`, place(`k${i}`, 1000 + i)),
        }));
        for (const o of ops) {
          const r = records[o.record] as (typeof records)[number];
          let envelope = r.envelope;
          let where = r.where;
          if (o.what === "replaced") where = { ...r.where, createdAt: r.where.createdAt + 1 };
          if (o.what === "rewritten") where = { ...r.where, valueVersion: r.where.valueVersion + 1 };
          if (o.what === "moved") where = place(`k${(o.record + 1) % 12}`, r.where.createdAt);
          if (o.what === "altered") {
            envelope = Buffer.from(envelope);
            const at = o.byte % envelope.length;
            envelope[at] = (envelope[at] as number) ^ 1;
          }
          if (o.what === "old-root") {
            expect(outcome(rotated, envelope, where)).toBe(outcome(new ValueCipher(root, [], { recordKeyCache: 0 }), envelope, where));
            continue;
          }
          const expected = outcome(uncached, envelope, where);
          expect(outcome(cached, envelope, where)).toBe(expected);
          if (o.what === "right") expect(expected).toBe(`ok:value-${o.record}`);
          else expect(expected).toMatch(/^refused:/);
        }
      }),
      { numRuns: 100 },
    );
  });
});
