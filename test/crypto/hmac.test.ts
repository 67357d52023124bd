import { createHmac, hkdfSync } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { HmacSha256, hmacSha256 } from "../../src/crypto/hmac.js";
import { hkdfSha256Block } from "../../src/crypto/cipher.js";

/**
 * hmac.ts: HMAC-SHA256 from two one-shot digests gives the bytes of RFC
 * 4231's test vectors and of Node's createHmac, for any key and message,
 * including keys longer than a block and messages longer than the buffer
 * an HmacSha256 starts with.
 */

/** RFC 4231 section 4, the HMAC-SHA-256 results (test case 5 truncates its output and is left out). */
const RFC4231: { key: Buffer; data: Buffer; mac: string }[] = [
  {
    key: Buffer.alloc(20, 0x0b),
    data: Buffer.from("Hi There"),
    mac: "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
  },
  {
    key: Buffer.from("Jefe"),
    data: Buffer.from("what do ya want for nothing?"),
    mac: "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
  },
  {
    key: Buffer.alloc(20, 0xaa),
    data: Buffer.alloc(50, 0xdd),
    mac: "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe",
  },
  {
    key: Buffer.from("0102030405060708090a0b0c0d0e0f10111213141516171819", "hex"),
    data: Buffer.alloc(50, 0xcd),
    mac: "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b",
  },
  {
    key: Buffer.alloc(131, 0xaa),
    data: Buffer.from("Test Using Larger Than Block-Size Key - Hash Key First"),
    mac: "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
  },
  {
    key: Buffer.alloc(131, 0xaa),
    data: Buffer.from(
      "This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm.",
    ),
    mac: "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2",
  },
];

const reference = (key: Uint8Array, data: string | Uint8Array): string =>
  createHmac("sha256", key)
    .update(data as string)
    .digest("hex");

describe("HMAC-SHA256 from one-shot digests", () => {
  it("gives RFC 4231's results", () => {
    for (const v of RFC4231) {
      expect(hmacSha256(v.key, v.data).toString("hex")).toBe(v.mac);
      // hex() takes text: the vectors whose data is UTF-8 text.
      if (v.data.equals(Buffer.from(v.data.toString("utf8"), "utf8"))) {
        expect(new HmacSha256(v.key).hex(v.data.toString("utf8"))).toBe(v.mac);
      }
    }
  });

  it("equals createHmac for any key and text, one instance reused for messages of every length", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 200 }),
        fc.array(fc.oneof(fc.string({ unit: "binary", maxLength: 40 }), fc.string({ unit: "grapheme", maxLength: 900 })), {
          minLength: 1,
          maxLength: 6,
        }),
        (key, texts) => {
          const mac = new HmacSha256(key);
          for (const text of texts) expect(mac.hex(text)).toBe(reference(key, text));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("equals createHmac for any key and bytes, the scratch reused across calls", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), fc.array(fc.uint8Array({ maxLength: 300 }), { minLength: 1, maxLength: 4 }), (key, messages) => {
        for (const data of messages) expect(hmacSha256(key, data).toString("hex")).toBe(reference(key, data));
      }),
      { numRuns: 300 },
    );
  });

  it("keeps HKDF's record keys byte-identical to hkdfSync (RFC 5869)", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.uint8Array({ minLength: 1, maxLength: 64 }), fc.string({ maxLength: 40 }), (ikm, salt, info) => {
        const expected = Buffer.from(hkdfSync("sha256", ikm, salt, info, 32));
        expect(hkdfSha256Block(Buffer.from(ikm), Buffer.from(salt), Buffer.from(info))).toEqual(expected);
      }),
      { numRuns: 200 },
    );
  });

  it("hashes a key longer than a block first, and only then (RFC 2104 section 2)", () => {
    for (const length of [0, 1, 32, 63, 64, 65, 100, 131]) {
      const key = Buffer.alloc(length, 0x5a);
      expect(new HmacSha256(key).hex("message")).toBe(reference(key, "message"));
      expect(hmacSha256(key, Buffer.from("message")).toString("hex")).toBe(reference(key, "message"));
    }
  });

  it("grows its buffer for a long message and stays right for short ones after it", () => {
    const key = Buffer.from("chain key");
    const mac = new HmacSha256(key);
    for (const text of ["short", "é€😀".repeat(2_000), "", "x".repeat(5_000), "y"]) expect(mac.hex(text)).toBe(reference(key, text));
  });
});
