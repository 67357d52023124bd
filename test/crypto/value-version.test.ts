import { describe, expect, it } from "vitest";
import { aadForRecord, DecryptError, generateRootKey, ValueCipher } from "../../src/crypto/cipher.js";
import type { RecordPlace } from "../../src/crypto/cipher.js";
import { buildTestVault } from "../support/helpers.js";
import type { TestVault } from "../support/helpers.js";

// The value version (schema.sql version 19, schema-pg.sql version 9) bound into a secret
// value's AAD (envelope v3, crypto/aad.ts aadForValue; docs/operations.md, "Encryption at
// rest"): an older value of the same row, put back by its ciphertext after a replace, does not
// open. The route-level tests run on both engines, the raw edits through v.query.

/** A v2 envelope as a build before value versions wrote it: version byte 2, the v2 AAD. */
function v2Envelope(cipher: ValueCipher, value: string, place: Omit<RecordPlace, "valueVersion">): Buffer {
  const envelope = cipher.encrypt(value, aadForRecord(place));
  envelope[0] = 2;
  return envelope;
}

interface Row {
  id: number;
  ciphertext: Buffer;
  created_at: number;
  value_version: number;
  read_count: number;
}

async function rowOf(v: TestVault, key: string): Promise<Row> {
  const [row] = (await v.query("SELECT id, ciphertext, created_at, value_version, read_count FROM secrets WHERE key = ?", key)) as unknown as Row[];
  return row as Row;
}

/** The read answers exactly what a damaged ciphertext answers (test/crypto/crypto.test.ts), and not `notServed`. */
async function expectRefused(v: TestVault, key: string, notServed: string): Promise<void> {
  const res = await v.asMaster("GET", `/secrets/${key}`);
  expect(res.status).toBe(500);
  const text = await res.text();
  expect(text).toBe('{"error":"internal server error"}');
  expect(text).not.toContain(notServed);
}

describe("a replace's older ciphertext pasted back into its row (route level)", () => {
  it("does not serve the old value: 500 as for a damaged ciphertext, the read not counted", async () => {
    const v = buildTestVault();
    expect((await v.asMaster("POST", "/secrets", { key: "db/password", value: "first-value", max_reads: 5 })).status).toBe(201);
    const first = await rowOf(v, "db/password");
    expect(first.value_version).toBe(1);
    expect(first.ciphertext[0]).toBe(3);
    v.clock.advance(1000);
    expect((await v.asMaster("PUT", "/secrets/db/password", { value: "second-value", max_reads: 5 })).status).toBe(200);
    const second = await rowOf(v, "db/password");
    // Same row, same created_at: only the value version tells the two values apart.
    expect(second).toMatchObject({ id: first.id, created_at: first.created_at, value_version: 2 });

    await v.query("UPDATE secrets SET ciphertext = ? WHERE key = 'db/password'", first.ciphertext);
    await expectRefused(v, "db/password", "first-value");
    expect((await rowOf(v, "db/password")).read_count).toBe(0);

    // The row's own ciphertext put back opens again.
    await v.query("UPDATE secrets SET ciphertext = ? WHERE key = 'db/password'", second.ciphertext);
    expect(await (await v.asMaster("GET", "/secrets/db/password")).json()).toMatchObject({ value: "second-value", read_count: 1 });
  });

  it("every replace moves the version by one; no earlier value of the row opens in it", async () => {
    const v = buildTestVault();
    await v.asMaster("POST", "/secrets", { key: "k", value: "value-1" });
    const olds: Buffer[] = [];
    for (let i = 2; i <= 4; i++) {
      olds.push((await rowOf(v, "k")).ciphertext);
      expect((await v.asMaster("PUT", "/secrets/k", { value: `value-${i}` })).status).toBe(200);
      expect((await rowOf(v, "k")).value_version).toBe(i);
    }
    const current = (await rowOf(v, "k")).ciphertext;
    for (const [i, old] of olds.entries()) {
      await v.query("UPDATE secrets SET ciphertext = ? WHERE key = 'k'", old);
      await expectRefused(v, "k", `value-${i + 1}`);
    }
    await v.query("UPDATE secrets SET ciphertext = ? WHERE key = 'k'", current);
    expect(await (await v.asMaster("GET", "/secrets/k")).json()).toMatchObject({ value: "value-4" });
  });

  it("a ciphertext pasted into another row at the same value version does not open there", async () => {
    const v = buildTestVault();
    await v.asMaster("POST", "/secrets", { key: "victim", value: "victim-value" });
    await v.asMaster("POST", "/secrets", { key: "other", value: "other-value" });
    const victim = await rowOf(v, "victim");
    await v.query(
      "UPDATE secrets SET ciphertext = ?, created_at = ?, value_version = ? WHERE key = 'other'",
      victim.ciphertext,
      victim.created_at,
      victim.value_version,
    );
    await expectRefused(v, "other", "victim-value");
  });
});

describe("v2 envelopes from before value versions (route level)", () => {
  it("a v2 row at value version 0 (never rewritten since the upgrade) still reads; a replace makes it v3 at version 1", async () => {
    const v = buildTestVault();
    await v.asMaster("POST", "/secrets", { key: "legacy", value: "placeholder" });
    const row = await rowOf(v, "legacy");
    const old = v2Envelope(v.cipher, "written-by-v2", { scope: "global", key: "legacy", createdAt: row.created_at });
    await v.query("UPDATE secrets SET ciphertext = ?, value_version = 0 WHERE key = 'legacy'", old);
    const res = await v.asMaster("GET", "/secrets/legacy");
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ value: "written-by-v2" });

    expect((await v.asMaster("PUT", "/secrets/legacy", { value: "rewritten" })).status).toBe(200);
    const after = await rowOf(v, "legacy");
    expect(after.value_version).toBe(1);
    expect(after.ciphertext[0]).toBe(3);
    // The v2 value it replaced, pasted back into the row replaced since, does not open.
    await v.query("UPDATE secrets SET ciphertext = ? WHERE key = 'legacy'", old);
    await expectRefused(v, "legacy", "written-by-v2");
  });

  it("a v2 envelope pasted into a row at value version 1 or more fails, whatever its AAD", async () => {
    const v = buildTestVault();
    await v.asMaster("POST", "/secrets", { key: "k", value: "current" });
    const row = await rowOf(v, "k");
    expect(row.value_version).toBe(1);
    const forged = v2Envelope(v.cipher, "old-v2-value", { scope: "global", key: "k", createdAt: row.created_at });
    await v.query("UPDATE secrets SET ciphertext = ? WHERE key = 'k'", forged);
    await expectRefused(v, "k", "old-v2-value");
  });
});

describe("ValueCipher and the value version", () => {
  const place: RecordPlace = { scope: "global", key: "k", createdAt: 1_000, valueVersion: 3 };

  it("a v3 envelope opens only at the value version it was written for", () => {
    const cipher = new ValueCipher(generateRootKey());
    const envelope = cipher.encryptRecord("v", place);
    expect(envelope[0]).toBe(3);
    expect(cipher.decryptRecord(envelope, place)).toBe("v");
    for (const valueVersion of [0, 2, 4, 30]) {
      expect(() => cipher.decryptRecord(envelope, { ...place, valueVersion })).toThrow(DecryptError);
    }
    expect(() => cipher.decryptRecord(envelope, { ...place, createdAt: 1_001 })).toThrow(DecryptError);
  });

  it("v1 and v2 envelopes open only at value version 0", () => {
    const cipher = new ValueCipher(generateRootKey());
    const v2 = v2Envelope(cipher, "v2-value", place);
    const at0 = { ...place, valueVersion: 0 };
    expect(cipher.decryptRecord(v2, at0)).toBe("v2-value");
    expect(() => cipher.decryptRecord(v2, { ...place, valueVersion: 1 })).toThrow(/v2 envelope in a row whose value was written since/);
  });

  it("refuseEnvelopesBelow(3) refuses v1 and v2 even at value version 0; (2) refuses v1 only; others are no version", () => {
    const cipher = new ValueCipher(generateRootKey());
    const at0 = { ...place, valueVersion: 0 };
    const v2 = v2Envelope(cipher, "v2-value", at0);
    const v3 = cipher.encryptRecord("v3-value", at0);
    cipher.refuseEnvelopesBelow(2);
    expect(cipher.decryptRecord(v2, at0)).toBe("v2-value");
    cipher.refuseEnvelopesBelow(3);
    expect(() => cipher.decryptRecord(v2, at0)).toThrow(/v2 envelope in a database whose values were all upgraded to v3/);
    expect(cipher.decryptRecord(v3, at0)).toBe("v3-value");
    for (const bad of [0, 4, 2.5, Number.NaN]) expect(() => cipher.refuseEnvelopesBelow(bad)).toThrow(RangeError);
  });

  it("rewrap writes a v3 envelope for the next value version", () => {
    const cipher = new ValueCipher(generateRootKey());
    const at0 = { ...place, valueVersion: 0 };
    const next = cipher.rewrap(v2Envelope(cipher, "value", at0), at0);
    expect(next[0]).toBe(3);
    expect(cipher.decryptRecord(next, { ...place, valueVersion: 1 })).toBe("value");
    expect(() => cipher.decryptRecord(next, at0)).toThrow(DecryptError);
  });
});
