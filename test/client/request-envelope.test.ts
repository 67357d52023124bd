import { createCipheriv, createECDH, createHash, hkdfSync } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EnvelopeError } from "../../packages/client/src/envelope.js";
import { generateRequestKeys, openAnswer, parseAnswerEnvelope, requestRevealProof, sealAnswer } from "../../packages/client/src/request-envelope.js";

// The answer envelope of a request (docs/requests.md, "The envelope"): the published test vectors,
// checked against an independent implementation on node:crypto, so a third-party client can rely on them.

const REQUEST_ID = "req_0123456789abcdef";
const ASKER_PUBLIC = "BFFcPW6545a5BNP-yn9U_c0MwemXvzddylFa0KbDtANfRTa-OlDzGPv5pUdZAqIhUCvvDVfgjFOyzApW8X2fk1Q";
const ASKER_PRIVATE =
  "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyBRXD1uueOWuQTT_sp_VP3NDMHpl783XcpRWtCmw7QDX0U2vjpQ8xj7-aVHWQKiIVAr7w1X4IxTsswKVvF9n5NU";
const EPHEMERAL_PRIVATE =
  "ISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0-P0AfFAFGv7GyUfhPTdvg1M3P13r9mEqVIONXlAIfgxK7nuyZWgix-ncE3z3MC1CpZlJj-3cR-V-fikScUJbkfIkr";
const VECTOR =
  '{"v":1,"alg":"ECDH-P256+A256GCM","epk":"BB8UAUa_sbJR-E9N2-DUzc_Xev2YSpUg41eUAh-DErue7JlaCLH6dwTfPcwLUKlmUmP7dxH5X5-KRJxQluR8iSs","iv":"oKGio6Slpqeoqaqr","ct":"FNHlWKOHFehwvffCAk9YkE8Fovv0qTQkL_J7N-UIjTKQOcGe232aLg"}';
const PROOF = "2E6fgTmLdAKgYy_FPNuLPtBWEB0wAeuRX1rFbvFaxtw";
const REVEAL_CHECK = "DdRXCPYeNEnRvmfL8vr7NzpO5jfT9x8vd89U01FZViU";
const PLAINTEXT = "line one\r\nline two 🔑\n";

const bytes = (n: number, from: number) => Buffer.from(Array.from({ length: n }, (_, i) => from + i));

/** A P-256 key pair from its scalar, with node:crypto: the public point and the d || x || y form. */
function pairOf(d: Buffer): { ecdh: ReturnType<typeof createECDH>; point: Buffer; privateKey: string } {
  const ecdh = createECDH("prime256v1");
  ecdh.setPrivateKey(d);
  const point = ecdh.getPublicKey();
  return { ecdh, point, privateKey: Buffer.concat([d, point.subarray(1)]).toString("base64url") };
}

/** The answer made with node:crypto alone, from the description in docs/requests.md. */
function independentSeal(value: string, askerPoint: Buffer, ephemeral: ReturnType<typeof pairOf>, iv: Buffer, requestId: string): string {
  const shared = ephemeral.ecdh.computeSecret(askerPoint);
  const key = Buffer.from(hkdfSync("sha256", shared, Buffer.concat([ephemeral.point, askerPoint]), "ephemeral-vault request v1", 32));
  const epk = ephemeral.point.toString("base64url");
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(`evr1;ECDH-P256;A256GCM;${requestId};${epk}`, "utf8"));
  const ct = Buffer.concat([cipher.update(value, "utf8"), cipher.final(), cipher.getAuthTag()]);
  return JSON.stringify({ v: 1, alg: "ECDH-P256+A256GCM", epk, iv: iv.toString("base64url"), ct: ct.toString("base64url") });
}

describe("the published test vectors", () => {
  it("are what an independent node:crypto implementation makes, and what the envelope makes and opens", async () => {
    const asker = pairOf(bytes(32, 1));
    const ephemeral = pairOf(bytes(32, 0x21));
    expect(asker.point.toString("base64url")).toBe(ASKER_PUBLIC);
    expect(asker.privateKey).toBe(ASKER_PRIVATE);
    expect(ephemeral.privateKey).toBe(EPHEMERAL_PRIVATE);
    const iv = bytes(12, 0xa0);
    expect(independentSeal(PLAINTEXT, asker.point, ephemeral, iv, REQUEST_ID)).toBe(VECTOR);
    const sealed = await sealAnswer(ASKER_PUBLIC, REQUEST_ID, PLAINTEXT, { random: { ephemeralPrivateKey: EPHEMERAL_PRIVATE, iv: new Uint8Array(iv) } });
    expect(sealed).toBe(VECTOR);
    expect(await openAnswer(ASKER_PRIVATE, REQUEST_ID, VECTOR)).toBe(PLAINTEXT);
  });

  it("give the reveal proof and its check: HKDF of d under the asker's public point, then SHA-256", async () => {
    const proof = Buffer.from(hkdfSync("sha256", bytes(32, 1), Buffer.from(ASKER_PUBLIC, "base64url"), "ephemeral-vault request proof v1", 32));
    expect(proof.toString("base64url")).toBe(PROOF);
    expect(createHash("sha256").update(proof).digest("base64url")).toBe(REVEAL_CHECK);
    expect(await requestRevealProof(ASKER_PRIVATE)).toEqual({ proof: PROOF, revealCheck: REVEAL_CHECK });
  });

  it("are the ones docs/requests.md publishes", () => {
    const doc = readFileSync(join(import.meta.dirname, "../../docs/requests.md"), "utf8");
    for (const value of [REQUEST_ID, ASKER_PUBLIC, ASKER_PRIVATE, EPHEMERAL_PRIVATE, VECTOR, PROOF, REVEAL_CHECK]) expect(doc).toContain(value);
  });
});

describe("the answer envelope", () => {
  it("round-trips values byte-exact under a fresh key pair (CR LF, emoji, NUL, empty)", async () => {
    const keys = await generateRequestKeys();
    expect(keys.publicKey).toMatch(/^[A-Za-z0-9_-]{87}$/);
    expect(keys.privateKey).toMatch(/^[A-Za-z0-9_-]{128}$/);
    for (const value of ["", "a\r\nb", "🔑\u0000é", "x".repeat(100_000)]) {
      const envelope = await sealAnswer(keys.publicKey, "r1", value);
      expect(envelope).not.toContain(value.length > 0 ? value.slice(0, 8) : "\u0001");
      expect(await openAnswer(keys.privateKey, "r1", envelope)).toBe(value);
    }
  });

  it("uses a fresh ephemeral key and nonce per answer", async () => {
    const keys = await generateRequestKeys();
    const a = parseAnswerEnvelope(await sealAnswer(keys.publicKey, "r1", "same"));
    const b = parseAnswerEnvelope(await sealAnswer(keys.publicKey, "r1", "same"));
    expect(a?.epk).not.toBe(b?.epk);
    expect(a?.iv).not.toBe(b?.iv);
  });

  it("does not open under another request id, another key, or when altered", async () => {
    const other = await generateRequestKeys();
    await expect(openAnswer(ASKER_PRIVATE, "req_other", VECTOR)).rejects.toMatchObject({ name: "EnvelopeError", reason: "key" });
    await expect(openAnswer(other.privateKey, REQUEST_ID, VECTOR)).rejects.toBeInstanceOf(EnvelopeError);
    const env = JSON.parse(VECTOR) as Record<string, string>;
    const ct = env.ct as string;
    const flipped = JSON.stringify({ ...env, ct: (ct[0] === "A" ? "B" : "A") + ct.slice(1) });
    await expect(openAnswer(ASKER_PRIVATE, REQUEST_ID, flipped)).rejects.toMatchObject({ reason: "key" });
    // Another (valid) ephemeral key in the header: the AAD and the derived key both change.
    const swapped = JSON.stringify({ ...env, epk: other.publicKey });
    await expect(openAnswer(ASKER_PRIVATE, REQUEST_ID, swapped)).rejects.toMatchObject({ reason: "key" });
  });

  it("refuses malformed keys and envelopes with EnvelopeError", async () => {
    await expect(sealAnswer("not-a-key", "r1", "v")).rejects.toMatchObject({ reason: "key" });
    // 65 bytes starting 0x04 but not a point of the curve.
    await expect(sealAnswer(Buffer.concat([Buffer.of(4), Buffer.alloc(64, 1)]).toString("base64url"), "r1", "v")).rejects.toMatchObject({ reason: "key" });
    await expect(openAnswer(ASKER_PRIVATE.slice(0, 100), REQUEST_ID, VECTOR)).rejects.toMatchObject({ reason: "key" });
    // d of one key with the point of another.
    const mismatched = Buffer.concat([bytes(32, 2), Buffer.from(ASKER_PUBLIC, "base64url").subarray(1)]).toString("base64url");
    await expect(openAnswer(mismatched, REQUEST_ID, VECTOR)).rejects.toMatchObject({ reason: "key" });
    await expect(openAnswer(ASKER_PRIVATE, REQUEST_ID, "plain text")).rejects.toMatchObject({ reason: "format" });
    expect(parseAnswerEnvelope('{"v":2,"alg":"ECDH-P256+A256GCM","epk":"a","iv":"b","ct":"c"}')).toBeUndefined();
    expect(parseAnswerEnvelope("{not json")).toBeUndefined();
  });
});
