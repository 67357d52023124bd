import { createCipheriv, hkdfSync } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MAX_FILE_META_CHARS, openFileMeta, sealFileMeta } from "../../packages/client/src/file-meta.js";

// A file link's metadata shown before the reveal (docs/share.md, "Files"): the published vector
// recomputed with node:crypto alone from the description, then the client's WebCrypto code checked against it.

const LINK_KEY = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"; // bytes 0..31
const NONCE = Buffer.from(Array.from({ length: 12 }, (_, i) => 0xa0 + i));
const META = { name: "hello.txt", type: "text/plain", size: 13 };
const VECTOR = "oKGio6SlpqeoqaqrHLHa598ByW5I2B4mT2CzJTroO14l7xVZ8d_zut5gWN_firHblXMgvkLQUeKD08Ydu39YOwlfoORutU2y45z1alkK";

/** The field made with node:crypto alone, step by step from docs/share.md. */
function independentSeal(linkKey: Buffer, nonce: Buffer, plaintext: string): string {
  const label = "ephemeral-vault file meta v1";
  const key = Buffer.from(hkdfSync("sha256", linkKey, Buffer.alloc(0), label, 32));
  const cipher = createCipheriv("aes-256-gcm", key, nonce);
  cipher.setAAD(Buffer.from(label, "utf8"));
  return Buffer.concat([nonce, cipher.update(plaintext, "utf8"), cipher.final(), cipher.getAuthTag()]).toString("base64url");
}

describe("the published file meta vector", () => {
  it("is what node:crypto alone makes, what sealFileMeta makes, and opens to the name, type and size", async () => {
    const linkKey = Buffer.from(LINK_KEY, "base64url");
    expect(independentSeal(linkKey, NONCE, JSON.stringify(META))).toBe(VECTOR);
    expect(await sealFileMeta(LINK_KEY, META, { nonce: new Uint8Array(NONCE) })).toBe(VECTOR);
    expect(await openFileMeta(VECTOR, LINK_KEY)).toEqual(META);
  });

  it("is the one docs/share.md publishes", () => {
    const doc = readFileSync(join(import.meta.dirname, "../..", "docs", "share.md"), "utf8");
    for (const text of [VECTOR, JSON.stringify(META), "ephemeral-vault file meta v1"]) expect(doc).toContain(text);
  });
});

describe("a file meta", () => {
  it("uses a fresh nonce each time and opens only under its link key", async () => {
    const a = await sealFileMeta(LINK_KEY, META);
    const b = await sealFileMeta(LINK_KEY, META);
    expect(a).not.toBe(b);
    expect(a).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(await openFileMeta(a, LINK_KEY)).toEqual(META);
    const other = Buffer.alloc(32, 7).toString("base64url");
    expect(await openFileMeta(a, other)).toBeUndefined();
  });

  it("that is damaged, out of shape or under a bad key opens to undefined, never throws", async () => {
    const field = await sealFileMeta(LINK_KEY, META);
    const flipped = Buffer.from(field, "base64url");
    flipped[20] = (flipped[20] ?? 0) ^ 1;
    expect(await openFileMeta(flipped.toString("base64url"), LINK_KEY)).toBeUndefined();
    expect(await openFileMeta("not base64url!", LINK_KEY)).toBeUndefined();
    expect(await openFileMeta("", LINK_KEY)).toBeUndefined();
    expect(await openFileMeta(field, "short")).toBeUndefined();
    const badShape = independentSeal(Buffer.from(LINK_KEY, "base64url"), NONCE, JSON.stringify({ name: "x", type: "no type", size: 1 }));
    expect(await openFileMeta(badShape, LINK_KEY)).toBeUndefined();
    const negative = independentSeal(Buffer.from(LINK_KEY, "base64url"), NONCE, JSON.stringify({ name: "x", type: "text/plain", size: -1 }));
    expect(await openFileMeta(negative, LINK_KEY)).toBeUndefined();
  });

  it("of the longest name fits the vault's 1,400 characters", async () => {
    const longest = await sealFileMeta(LINK_KEY, { name: `${"ü".repeat(125)}.pdf`, type: "application/vnd.openxmlformats-officedocument.wordprocessingml.document", size: 64 * 1024 * 1024 });
    expect(longest.length).toBeLessThanOrEqual(MAX_FILE_META_CHARS);
  });
});
