import { hkdfSync } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { randomBytesPooled } from "../../src/crypto/random.js";
import { DecryptError, ValueCipher, aadFor, envelopeKeyId, generateRootKey, hkdfSha256Block, parseRootKey, rootKeyId } from "../../src/crypto/cipher.js";
import { hashToken, newId, newPublicId, newToken } from "../../src/crypto/tokens.js";
import { buildTestVault } from "../support/helpers.js";

const AAD = aadFor("global", "db/password");

describe("ValueCipher", () => {
  it("round-trips ASCII, unicode, empty-ish and large values", () => {
    const cipher = new ValueCipher(generateRootKey());
    for (const value of ["hunter2", "päss wörd 🔑 日本語 \u0000 \n", " ", "x".repeat(100_000)]) {
      expect(cipher.decrypt(cipher.encrypt(value, AAD), AAD)).toBe(value);
    }
  });

  it("uses a fresh nonce and salt per write: the same value encrypts differently every time", () => {
    const cipher = new ValueCipher(generateRootKey());
    const a = cipher.encrypt("same", AAD);
    const b = cipher.encrypt("same", AAD);
    expect(a.equals(b)).toBe(false);
    // version(1) | key id(8) | salt(16) | nonce(12) | tag(16) | body
    expect(a.subarray(9, 25).equals(b.subarray(9, 25))).toBe(false);
    expect(a.subarray(25, 37).equals(b.subarray(25, 37))).toBe(false);
    expect(a[0]).toBe(1);
    expect(a.length).toBe(1 + 8 + 16 + 12 + 16 + 4);
  });

  it("does not contain the plaintext", () => {
    const cipher = new ValueCipher(generateRootKey());
    const envelope = cipher.encrypt("plaintext-marker", AAD);
    expect(envelope.toString("latin1")).not.toContain("plaintext-marker");
  });

  it("throws DecryptError when the AAD differs (another key, another scope)", () => {
    const cipher = new ValueCipher(generateRootKey());
    const envelope = cipher.encrypt("v", aadFor("global", "a"));
    expect(() => cipher.decrypt(envelope, aadFor("global", "b"))).toThrow(DecryptError);
    expect(() => cipher.decrypt(envelope, aadFor("org_x", "a"))).toThrow(DecryptError);
    // the NUL separator keeps (scope, key) pairs apart
    const joined = cipher.encrypt("v", aadFor("ab", "c"));
    expect(() => cipher.decrypt(joined, aadFor("a", "bc"))).toThrow(DecryptError);
  });

  it("throws DecryptError for any tampered byte", () => {
    const cipher = new ValueCipher(generateRootKey());
    const envelope = cipher.encrypt("some value", AAD);
    // every byte after the key id: salt, nonce, tag and body
    for (let i = 9; i < envelope.length; i++) {
      const tampered = Buffer.from(envelope);
      tampered[i] = (tampered[i] as number) ^ 0x01;
      expect(() => cipher.decrypt(tampered, AAD), `byte ${i}`).toThrow(DecryptError);
    }
  });

  it("throws DecryptError for a truncated envelope or an unknown format version", () => {
    const cipher = new ValueCipher(generateRootKey());
    const envelope = cipher.encrypt("value", AAD);
    expect(() => cipher.decrypt(envelope.subarray(0, 20), AAD)).toThrow(DecryptError);
    expect(() => cipher.decrypt(Buffer.alloc(0), AAD)).toThrow(DecryptError);
    const v2 = Buffer.from(envelope);
    v2[0] = 2;
    expect(() => cipher.decrypt(v2, AAD)).toThrow(DecryptError);
    expect(() => cipher.decrypt(envelope.subarray(0, envelope.length - 1), AAD)).toThrow(DecryptError);
  });

  it("throws DecryptError for an unknown root key id (a different key)", () => {
    const a = new ValueCipher(generateRootKey());
    const b = new ValueCipher(generateRootKey());
    expect(() => b.decrypt(a.encrypt("v", AAD), AAD)).toThrow(/no root key with id/);
    expect(() => b.decrypt(a.encrypt("v", AAD), AAD)).toThrow(DecryptError);
  });

  it("throws DecryptError when the key id is forged to a loaded key", () => {
    const rootA = generateRootKey();
    const rootB = generateRootKey();
    const a = new ValueCipher(rootA);
    const both = new ValueCipher(rootB, [rootA]);
    const envelope = a.encrypt("v", AAD);
    Buffer.from(both.currentKeyId, "hex").copy(envelope, 1);
    expect(() => both.decrypt(envelope, AAD)).toThrow(DecryptError);
  });

  it("decrypts old records after a rotation (new current key, old one as previous) and writes with the new key", () => {
    const oldRoot = generateRootKey();
    const newRoot = generateRootKey();
    const before = new ValueCipher(oldRoot);
    const oldRecord = before.encrypt("written before", AAD);
    const after = new ValueCipher(newRoot, [oldRoot]);
    expect(after.decrypt(oldRecord, AAD)).toBe("written before");
    const newRecord = after.encrypt("written after", AAD);
    expect(envelopeKeyId(newRecord)).toBe(rootKeyId(newRoot));
    expect(envelopeKeyId(oldRecord)).toBe(rootKeyId(oldRoot));
    expect(after.currentKeyId).toBe(rootKeyId(newRoot));
    expect(after.hasKey(rootKeyId(oldRoot))).toBe(true);
    // without the old key the old record does not open
    expect(() => new ValueCipher(newRoot).decrypt(oldRecord, AAD)).toThrow(DecryptError);
  });

  it("gives a root key a stable 16-hex id that differs between keys", () => {
    const root = generateRootKey();
    expect(rootKeyId(root)).toMatch(/^[0-9a-f]{16}$/);
    expect(rootKeyId(Buffer.from(root))).toBe(rootKeyId(root));
    expect(rootKeyId(generateRootKey())).not.toBe(rootKeyId(root));
    expect(rootKeyId(root)).not.toContain(root.toString("hex").slice(0, 16));
  });
});

describe("parseRootKey", () => {
  const bytes = Buffer.from(Array.from({ length: 32 }, (_, i) => i * 7 + 3));

  it("reads 64 hex characters, either case, with surrounding white space", () => {
    expect(parseRootKey(bytes.toString("hex"))?.equals(bytes)).toBe(true);
    expect(parseRootKey(bytes.toString("hex").toUpperCase())?.equals(bytes)).toBe(true);
    expect(parseRootKey(`  ${bytes.toString("hex")}\n`)?.equals(bytes)).toBe(true);
  });

  it("reads base64 and base64url of 32 bytes, padded or not", () => {
    expect(parseRootKey(bytes.toString("base64"))?.equals(bytes)).toBe(true);
    expect(parseRootKey(bytes.toString("base64").replace(/=$/, ""))?.equals(bytes)).toBe(true);
    expect(parseRootKey(bytes.toString("base64url"))?.equals(bytes)).toBe(true);
    const awkward = Buffer.alloc(32, 0xfb); // base64 with + and /, base64url with - and _
    expect(awkward.toString("base64")).toMatch(/[+/]/);
    expect(parseRootKey(awkward.toString("base64"))?.equals(awkward)).toBe(true);
    expect(parseRootKey(awkward.toString("base64url"))?.equals(awkward)).toBe(true);
  });

  it("refuses anything else", () => {
    const bad = [
      "",
      "not a key",
      bytes.toString("hex").slice(0, 62), // 31 bytes of hex
      bytes.toString("hex") + "00", // 33 bytes of hex
      "g".repeat(64), // not hex, and not 43 base64 chars
      Buffer.alloc(31).toString("base64"),
      Buffer.alloc(33).toString("base64"),
      Buffer.alloc(48, 0xff).toString("base64"),
      bytes.toString("base64").replace(/=$/, "==="),
      bytes.toString("base64").slice(0, 20) + "!" + bytes.toString("base64").slice(21),
    ];
    for (const text of bad) expect(parseRootKey(text), JSON.stringify(text)).toBeUndefined();
  });
});

describe("ids and tokens", () => {
  it("makes public ids of 64 lowercase hex characters, unique", () => {
    const ids = new Set(Array.from({ length: 100 }, () => newPublicId()));
    expect(ids.size).toBe(100);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{64}$/);
  });

  it("makes prefixed ids and tokens of the documented shape", () => {
    expect(newId("org_")).toMatch(/^org_[a-z2-7]{26}$/);
    expect(newToken("vsk_")).toMatch(/^vsk_[A-Za-z0-9_-]{43}$/);
    expect(hashToken("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });

});

describe("a ciphertext moved to another row (route level)", () => {
  it("answers exactly 500 {error: internal server error}, never the other value, and counts no read", async () => {
    const v = buildTestVault();
    await v.asMaster("POST", "/secrets", { key: "victim", value: "victim-value", max_reads: 5 });
    await v.asMaster("POST", "/secrets", { key: "attacker", value: "attacker-value", max_reads: 5 });
    await v.query("UPDATE secrets SET ciphertext = (SELECT ciphertext FROM secrets WHERE key = 'victim') WHERE key = 'attacker'");

    const res = await v.asMaster("GET", "/secrets/attacker");
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(text).toBe('{"error":"internal server error"}');
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(text).not.toContain("victim-value");

    const [row] = await v.query("SELECT read_count, state FROM secrets WHERE key = 'attacker'");
    expect(row).toEqual({ read_count: 0, state: "active" });
    // the victim is untouched and still reads correctly
    expect(await (await v.asMaster("GET", "/secrets/victim")).json()).toMatchObject({ value: "victim-value", read_count: 1 });
  });

  it("answers 500 for a public secret whose ciphertext was moved from a keyed one, and for a damaged ciphertext", async () => {
    const v = buildTestVault();
    await v.asMaster("POST", "/secrets", { key: "keyed", value: "keyed-value" });
    const { id } = (await (await v.asMaster("POST", "/secrets", { value: "public-value", max_reads: 1 })).json()) as { id: string };
    await v.query("UPDATE secrets SET ciphertext = (SELECT ciphertext FROM secrets WHERE key = 'keyed') WHERE key = ?", id);
    const moved = await v.asMaster("GET", `/secrets/${id}`);
    expect(moved.status).toBe(500);
    expect(await moved.text()).toBe('{"error":"internal server error"}');
    // the read was not counted, so the max_reads:1 secret was not burned
    expect(await v.query("SELECT read_count FROM secrets WHERE key = ?", id)).toEqual([{ read_count: 0 }]);

    await v.query("UPDATE secrets SET ciphertext = substr(ciphertext, 1, length(ciphertext) - 1) WHERE key = 'keyed'");
    const damaged = await v.asMaster("GET", "/secrets/keyed");
    expect(damaged.status).toBe(500);
    expect(await damaged.text()).toBe('{"error":"internal server error"}');
  });

  it("answers 500 when the database holds a record of a root key that is not loaded", async () => {
    const v = buildTestVault();
    await v.asMaster("POST", "/secrets", { key: "k", value: "v" });
    const stranger = new ValueCipher(generateRootKey()).encrypt("stranger", aadFor("global", "k"));
    await v.query("UPDATE secrets SET ciphertext = ? WHERE key = 'k'", stranger);
    const res = await v.asMaster("GET", "/secrets/k");
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: "internal server error" });
  });
});

describe("hkdfSha256Block", () => {
  it("gives the bytes of hkdfSync for a 32-byte output (RFC 5869, one block)", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 64 }), fc.uint8Array({ minLength: 0, maxLength: 48 }), fc.uint8Array({ maxLength: 40 }), (ikm, salt, info) => {
        const expected = Buffer.from(hkdfSync("sha256", ikm, salt, info, 32));
        expect(hkdfSha256Block(Buffer.from(ikm), Buffer.from(salt), Buffer.from(info)).equals(expected)).toBe(true);
      }),
    );
  });

  it("matches RFC 5869 test case 1 (truncated to one block)", () => {
    const ikm = Buffer.alloc(22, 0x0b);
    const salt = Buffer.from("000102030405060708090a0b0c", "hex");
    const info = Buffer.from("f0f1f2f3f4f5f6f7f8f9", "hex");
    expect(hkdfSha256Block(ikm, salt, info).toString("hex")).toBe(
      "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf",
    );
  });
});

describe("randomBytesPooled", () => {
  it("hands out fresh bytes of the asked length, never the same bytes twice", () => {
    const seen = new Set<string>();
    const views: Buffer[] = [];
    for (let i = 0; i < 2000; i++) {
      const b = randomBytesPooled(12 + (i % 21));
      expect(b.length).toBe(12 + (i % 21));
      views.push(b);
      seen.add(b.toString("hex"));
    }
    expect(seen.size).toBe(2000);
    // Earlier views are not overwritten by later refills of the pool.
    const snapshot = views.map((b) => b.toString("hex"));
    for (let i = 0; i < 2000; i++) randomBytesPooled(32);
    expect(views.map((b) => b.toString("hex"))).toEqual(snapshot);
  });

  it("serves requests larger than the pool", () => {
    expect(randomBytesPooled(10_000).length).toBe(10_000);
  });
});
