import { createCipheriv, hkdfSync, pbkdf2Sync } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EnvelopeError, fromBase64Url, openEnvelope, parseEnvelope, sealEnvelope } from "../../packages/client/src/envelope.js";
import type { EnvelopeV1 } from "../../packages/client/src/envelope.js";
import { linkFragment, parseShareLink } from "../../packages/client/src/share-link.js";

// The end-to-end envelope (docs/share.md, "The envelope"): the published test vectors, checked
// against an independent implementation on node:crypto, so a third-party client can rely on them.

const LINK_KEY = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"; // bytes 0..31
const VECTOR_NONE = '{"v":1,"alg":"A256GCM","kdf":"none","iv":"oKGio6Slpqeoqaqr","ct":"strnDC7PvOtI2X-ZYL0iyB_DyzG_O9nLmkVjdh0"}';
const VECTOR_PASS =
  '{"v":1,"alg":"A256GCM","kdf":"PBKDF2-SHA256","iter":600000,"salt":"8PHy8_T19vf4-fr7_P3-_w","iv":"oKGio6Slpqeoqaqr","ct":"E-YiyHx9Tils4GTSJzbnwBFWdA_axTtWPOgrFjs"}';
const PLAINTEXT = "hello, world\n";
const PASSPHRASE = "correct horse battery staple";

/** The envelope made with node:crypto alone, from the description in docs/share.md. */
function independentSeal(value: string, linkKey: Buffer, iv: Buffer, pass?: { passphrase: string; salt: Buffer; iter: number }): string {
  const stretched = pass === undefined ? Buffer.alloc(0) : pbkdf2Sync(pass.passphrase.normalize("NFC"), pass.salt, pass.iter, 32, "sha256");
  const salt = pass?.salt ?? Buffer.alloc(0);
  const key = Buffer.from(hkdfSync("sha256", Buffer.concat([linkKey, stretched]), salt, "ephemeral-vault share v1", 32));
  const b64u = (b: Buffer) => b.toString("base64url");
  const header = pass === undefined ? "ev1;A256GCM;none" : `ev1;A256GCM;PBKDF2-SHA256;${pass.iter};${b64u(pass.salt)}`;
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(header, "utf8"));
  const ct = Buffer.concat([cipher.update(value, "utf8"), cipher.final(), cipher.getAuthTag()]);
  const head = pass === undefined ? { kdf: "none" } : { kdf: "PBKDF2-SHA256", iter: pass.iter, salt: b64u(pass.salt) };
  return JSON.stringify({ v: 1, alg: "A256GCM", ...head, iv: b64u(iv), ct: b64u(ct) });
}

const bytes = (n: number, from: number) => Buffer.from(Array.from({ length: n }, (_, i) => from + i));

describe("the published test vectors", () => {
  it("are what an independent node:crypto implementation makes, and open to the plaintext", async () => {
    const linkKey = bytes(32, 0);
    const iv = bytes(12, 0xa0);
    expect(linkKey.toString("base64url")).toBe(LINK_KEY);
    expect(independentSeal(PLAINTEXT, linkKey, iv)).toBe(VECTOR_NONE);
    expect(independentSeal(PLAINTEXT, linkKey, iv, { passphrase: PASSPHRASE, salt: bytes(16, 0xf0), iter: 600_000 })).toBe(VECTOR_PASS);
    expect(await openEnvelope(parseEnvelope(VECTOR_NONE) as EnvelopeV1, LINK_KEY)).toBe(PLAINTEXT);
    expect(await openEnvelope(parseEnvelope(VECTOR_PASS) as EnvelopeV1, LINK_KEY, PASSPHRASE)).toBe(PLAINTEXT);
  });

  it("are the ones docs/share.md publishes", () => {
    const doc = readFileSync(join(import.meta.dirname, "../..", "docs", "share.md"), "utf8");
    for (const text of [LINK_KEY, VECTOR_NONE, VECTOR_PASS, PASSPHRASE]) expect(doc).toContain(text);
  });

  it("sealEnvelope version 1 with the vectors' randomness makes the same bytes", async () => {
    const random = { linkKey: new Uint8Array(bytes(32, 0)), iv: new Uint8Array(bytes(12, 0xa0)), salt: new Uint8Array(bytes(16, 0xf0)) };
    expect((await sealEnvelope(PLAINTEXT, { random, version: 1 })).envelope).toBe(VECTOR_NONE);
    expect((await sealEnvelope(PLAINTEXT, { random, passphrase: PASSPHRASE, version: 1 })).envelope).toBe(VECTOR_PASS);
  });
});

describe("opening", () => {
  it("refuses a wrong link key, a wrong or missing passphrase, and an altered header or ciphertext", async () => {
    const none = parseEnvelope(VECTOR_NONE) as EnvelopeV1;
    const pass = parseEnvelope(VECTOR_PASS) as EnvelopeV1;
    const otherKey = Buffer.alloc(32, 7).toString("base64url");
    await expect(openEnvelope(none, otherKey)).rejects.toMatchObject({ reason: "key" });
    await expect(openEnvelope(none, LINK_KEY.slice(0, 20))).rejects.toMatchObject({ reason: "key" });
    await expect(openEnvelope(pass, LINK_KEY)).rejects.toMatchObject({ reason: "passphrase" });
    await expect(openEnvelope(pass, LINK_KEY, "wrong")).rejects.toMatchObject({ reason: "passphrase" });
    // The header is the AAD: a changed iteration count does not open, and an absurd one is refused before any work.
    await expect(openEnvelope({ ...pass, iter: 600_001 }, LINK_KEY, PASSPHRASE)).rejects.toBeInstanceOf(EnvelopeError);
    await expect(openEnvelope({ ...pass, iter: 1 }, LINK_KEY, PASSPHRASE)).rejects.toMatchObject({ reason: "format" });
    const ct = fromBase64Url(none.ct);
    ct[0] = (ct[0] ?? 0) ^ 1;
    await expect(openEnvelope({ ...none, ct: Buffer.from(ct).toString("base64url") }, LINK_KEY)).rejects.toMatchObject({ reason: "key" });
  });

  it("tells an envelope from a plain value", () => {
    for (const plain of ["hunter2", "{}", '{"v":1}', '{"v":4,"alg":"A256GCM","kdf":"none","iv":"a","ct":"b"}', '{"v":2,"alg":"A256GCM","kdf":"PBKDF2-SHA256","iter":100000,"salt":"a","iv":"a","ct":"b"}', "{not json"]) {
      expect(parseEnvelope(plain), plain).toBeUndefined();
    }
    expect(parseEnvelope(VECTOR_PASS)).toMatchObject({ kdf: "PBKDF2-SHA256", iter: 600_000 });
  });

  it("round-trips any text: newlines, CR LF, emoji, 64 KiB", async () => {
    const value = `a\r\nb\n🔐${"x".repeat(65_000)}`;
    const { envelope, linkKey } = await sealEnvelope(value);
    expect(await openEnvelope(parseEnvelope(envelope) as EnvelopeV1, linkKey)).toBe(value);
  });
});

describe("links", () => {
  it("carry the key in the fragment, .p when a passphrase is needed and .f for a file", () => {
    const id = "ab".repeat(32);
    expect(parseShareLink(`https://v.example/s/${id}#${linkFragment(LINK_KEY, true)}`)).toEqual({
      base: "https://v.example",
      id,
      kind: "page",
      linkKey: LINK_KEY,
      needsPassphrase: true,
      holdsFile: false,
    });
    expect(parseShareLink(`https://v.example/vault/s/${id}#${LINK_KEY}`)).toMatchObject({ base: "https://v.example/vault", needsPassphrase: false, holdsFile: false });
    // A file link: `.f` last, after `.p` when there is one (a reader that knows only `.p` still finds it second).
    expect(linkFragment(LINK_KEY, true, true)).toBe(`${LINK_KEY}.p.f`);
    expect(linkFragment(LINK_KEY, false, true)).toBe(`${LINK_KEY}.f`);
    expect(parseShareLink(`https://v.example/s/${id}#${LINK_KEY}.p.f`)).toMatchObject({ linkKey: LINK_KEY, needsPassphrase: true, holdsFile: true });
    expect(parseShareLink(`https://v.example/s/${id}#${LINK_KEY}.f`)).toMatchObject({ linkKey: LINK_KEY, needsPassphrase: false, holdsFile: true });
    expect(parseShareLink(`http://127.0.0.1:8484/secrets/${id}`)).toMatchObject({ kind: "api", linkKey: undefined });
    for (const bad of ["prod/db", `ftp://x/s/${id}`, `https://x/s/${id.slice(2)}`, "https://x/s/"]) expect(parseShareLink(bad), bad).toBeUndefined();
  });
});
