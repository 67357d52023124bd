import { createCipheriv, createHash, hkdfSync, pbkdf2Sync } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openEnvelope, openEnvelopeContent, parseEnvelope, prepareReveal, sealEnvelope, sealFileEnvelope } from "../../packages/client/src/envelope.js";
import type { EnvelopeV1 } from "../../packages/client/src/envelope.js";
import { FILE_META_BYTES, fileSizeOfCiphertext, safeFileName } from "../../packages/client/src/file-payload.js";

// The file envelope, version 3 (docs/share.md, "Envelope version 3: a file"): the published vectors
// recomputed with node:crypto alone from the description, then the client's WebCrypto code checked against them.

const LINK_KEY = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"; // bytes 0..31
const PASSPHRASE = "correct horse battery staple";
const FILE = { name: "hello.txt", type: "text/plain", bytes: new Uint8Array(Buffer.from("hello, world\n")) };
const VECTOR_NONE_SHA256 = "3EZEj3gi0bP3Hv7negmSxt-mdaZ85bKM-qnVpkOZPK8";
const VECTOR_PASS_SHA256 = "0nEpAAo0XLokT7pqyEIm6neFpXtlHxGIMsK4zJOY1-w";

const bytes = (n: number, from: number) => Buffer.from(Array.from({ length: n }, (_, i) => from + i));

/** The version-3 envelope made with node:crypto alone, step by step from docs/share.md. */
function independentSeal(file: { name: string; type: string; bytes: Uint8Array }, linkKey: Buffer, iv: Buffer, passphrase?: string): string {
  const b64u = (b: Buffer) => b.toString("base64url");
  let ikm = linkKey;
  let salt = Buffer.alloc(0);
  if (passphrase !== undefined) {
    salt = Buffer.from(hkdfSync("sha256", linkKey, Buffer.alloc(0), "ephemeral-vault share v2 salt", 16));
    ikm = Buffer.concat([linkKey, pbkdf2Sync(passphrase.normalize("NFC"), salt, 600_000, 32, "sha256")]);
  }
  const key = Buffer.from(hkdfSync("sha256", ikm, salt, "ephemeral-vault share v2", 32));
  const header = passphrase === undefined ? "ev3;A256GCM;none" : `ev3;A256GCM;PBKDF2-SHA256;600000;${b64u(salt)}`;
  const meta = Buffer.alloc(1024, 0x20);
  Buffer.from(JSON.stringify({ name: file.name, type: file.type }), "utf8").copy(meta);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(header, "utf8"));
  const ct = Buffer.concat([cipher.update(Buffer.concat([meta, file.bytes])), cipher.final(), cipher.getAuthTag()]);
  const head = passphrase === undefined ? { kdf: "none" } : { kdf: "PBKDF2-SHA256", iter: 600_000, salt: b64u(salt) };
  return JSON.stringify({ v: 3, alg: "A256GCM", ...head, iv: b64u(iv), ct: b64u(ct) });
}

const sha = (text: string) => createHash("sha256").update(text).digest("base64url");
const random = { linkKey: new Uint8Array(bytes(32, 0)), iv: new Uint8Array(bytes(12, 0xa0)) };

describe("the published file vectors", () => {
  it("are what node:crypto alone makes, what sealFileEnvelope makes, and open to the file", async () => {
    const none = independentSeal(FILE, bytes(32, 0), bytes(12, 0xa0));
    const pass = independentSeal(FILE, bytes(32, 0), bytes(12, 0xa0), PASSPHRASE);
    expect(sha(none)).toBe(VECTOR_NONE_SHA256);
    expect(sha(pass)).toBe(VECTOR_PASS_SHA256);
    expect((await sealFileEnvelope(FILE, { random })).envelope).toBe(none);
    const sealed = await sealFileEnvelope(FILE, { random, passphrase: PASSPHRASE });
    expect(sealed.envelope).toBe(pass);
    // The reveal proof is version 2's: the same reveal_check as docs/share.md "Test vectors of the proof".
    expect(sealed.revealCheck).toBe("5imDDz6aRMvbgky7gr1vq6E7mKvcrxOrjZunRNx-aOg");
    const opened = await openEnvelopeContent(parseEnvelope(pass) as EnvelopeV1, LINK_KEY, PASSPHRASE);
    expect(opened).toEqual({ file: { name: "hello.txt", type: "text/plain", bytes: expect.any(Uint8Array) } });
    expect(typeof opened !== "string" && Buffer.from(opened.file.bytes).toString()).toBe("hello, world\n");
  });

  it("are the ones docs/share.md publishes", () => {
    const doc = readFileSync(join(import.meta.dirname, "../..", "docs", "share.md"), "utf8");
    for (const text of [VECTOR_NONE_SHA256, VECTOR_PASS_SHA256, "ev3;A256GCM;none"]) expect(doc).toContain(text);
  });
});

describe("a file envelope", () => {
  it("round-trips all 256 byte values, and its ciphertext tells the exact size and nothing of the name", async () => {
    const all = new Uint8Array(256 * 40);
    for (let i = 0; i < all.length; i++) all[i] = i % 256;
    const long = { name: `${"ü".repeat(100)}.bin`, type: "application/octet-stream", bytes: all };
    const short = { name: "a", type: "application/octet-stream", bytes: all };
    const a = await sealFileEnvelope(long);
    const b = await sealFileEnvelope(short);
    expect(a.envelope.length).toBe(b.envelope.length);
    const env = parseEnvelope(a.envelope) as EnvelopeV1;
    expect(env.v).toBe(3);
    expect(fileSizeOfCiphertext(env.ct.length)).toBe(all.length);
    const prepared = await prepareReveal(a.linkKey);
    const opened = await prepared.openContent(env);
    if (typeof opened === "string") throw new Error("a file opened as text");
    expect(opened.file.name).toBe(long.name);
    expect(Buffer.from(opened.file.bytes).equals(Buffer.from(all))).toBe(true);
    // The text openers refuse it clearly rather than return the bytes as text.
    await expect(prepared.open(env)).rejects.toMatchObject({ reason: "format" });
    await expect(openEnvelope(env, a.linkKey)).rejects.toMatchObject({ reason: "format" });
  });

  it("refuses a changed header: version 3 made 2, or 2 made 3, does not open", async () => {
    const file = await sealFileEnvelope(FILE);
    const env = parseEnvelope(file.envelope) as EnvelopeV1;
    await expect(openEnvelopeContent({ ...env, v: 2 }, file.linkKey)).rejects.toMatchObject({ reason: "key" });
    const text = await sealEnvelope("hello");
    const t = parseEnvelope(text.envelope) as EnvelopeV1;
    await expect(openEnvelopeContent({ ...t, v: 3 }, text.linkKey)).rejects.toMatchObject({ reason: "key" });
    expect(await openEnvelopeContent(t, text.linkKey)).toBe("hello");
  });

  it("needs a name of 1 to 255 bytes and a media type", async () => {
    await expect(sealFileEnvelope({ ...FILE, name: "" })).rejects.toThrow(/name/);
    await expect(sealFileEnvelope({ ...FILE, name: "x".repeat(256) })).rejects.toThrow(/name/);
    await expect(sealFileEnvelope({ ...FILE, type: "pdf" })).rejects.toThrow(/type/);
    await expect(sealFileEnvelope({ ...FILE, type: "text/plain; charset=utf-8" })).rejects.toThrow(/type/);
    expect(FILE_META_BYTES).toBe(1024);
  });
});

describe("safeFileName", () => {
  it("keeps the base name only, without control or bidirectional characters or leading dots", () => {
    expect(safeFileName("report.pdf")).toBe("report.pdf");
    expect(safeFileName("../../etc/passwd")).toBe("passwd");
    expect(safeFileName("C:\\Users\\x\\evil.exe")).toBe("evil.exe");
    expect(safeFileName("a\nb\u0000c\u007f\u009b.txt")).toBe("abc.txt");
    expect(safeFileName("invoice\u202Efdp.exe")).toBe("invoicefdp.exe");
    expect(safeFileName(".bashrc")).toBe("bashrc");
    expect(safeFileName("..")).toBe("file");
    expect(safeFileName("dir/")).toBe("file");
    expect(new TextEncoder().encode(safeFileName("é".repeat(300))).length).toBeLessThanOrEqual(255);
  });
});
