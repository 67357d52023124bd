/**
 * The end-to-end share envelope, version 1 (docs/share.md, "The envelope"):
 * what the CLI's `share`, the client's `share()` and the create page store
 * as a public secret's value, so that the vault only ever holds ciphertext
 * and the key travels in the link's fragment (`/s/<id>#<key>`), which a
 * browser never sends to a server.
 *
 * One implementation for every side: WebCrypto (`globalThis.crypto.subtle`),
 * which browsers and Node 20+ both have, and no other dependency.
 *
 * - link key: 32 random bytes, base64url without padding (43 characters);
 * - passphrase (optional): P = PBKDF2-HMAC-SHA256(passphrase as UTF-8, salt,
 *   `iter` iterations, 32 bytes), salt 16 random bytes;
 * - content key: HKDF-SHA256(ikm = link key || P (P empty without a
 *   passphrase), salt = the salt (empty without a passphrase),
 *   info = "ephemeral-vault share v1", 32 bytes) (RFC 5869);
 * - AES-256-GCM with a fresh 96-bit nonce; AAD = the envelope's header line
 *   (`ev1;A256GCM;none` or `ev1;A256GCM;PBKDF2-SHA256;<iter>;<salt>`), so
 *   the header cannot be changed without the tag failing.
 *
 * The stored value is the compact JSON
 * `{"v":1,"alg":"A256GCM","kdf":"none"|"PBKDF2-SHA256","iter"?,"salt"?,"iv","ct"}`
 * with `iv` and `ct` (ciphertext then the 16-byte tag) in base64url.
 *
 * Version 2 (docs/share.md, "Envelope version 2") derives the salt from the
 * link key and adds the reveal proof; version 3 (docs/share.md, "Envelope
 * version 3: a file") is version 2 whose plaintext is a file
 * (file-payload.ts), `ev3` in its header.
 */

import { decodeFilePayload, encodeFilePayload } from "./file-payload.js";
import type { SharedFile } from "./file-payload.js";

/** PBKDF2 iterations for a passphrase (OWASP's 2023 figure for PBKDF2-HMAC-SHA256). */
export const PASSPHRASE_ITERATIONS = 600_000;

/** Fewest PBKDF2 iterations an envelope may ask for when opened (a forged low count is refused). */
const MIN_ITERATIONS = 100_000;
/** Most PBKDF2 iterations an envelope may ask for when opened (bounds the work a link can cause). */
const MAX_ITERATIONS = 10_000_000;

/** Bytes over a plain ArrayBuffer, as WebCrypto takes them. */
export type Bytes = Uint8Array<ArrayBuffer>;

/** UTF-8 bytes of `text`, over a plain ArrayBuffer (as WebCrypto takes them). */
export const utf8 = (text: string): Bytes => {
  const encoded = new TextEncoder().encode(text);
  const out = new Uint8Array(encoded.length);
  out.set(encoded);
  return out;
};

const INFO = utf8("ephemeral-vault share v1");

/**
 * An envelope, as stored (docs/share.md, "The envelope"): version 1,
 * version 2 (with a reveal proof), or version 3 (a file, with the reveal
 * proof of version 2).
 */
export interface EnvelopeV1 {
  /**
   * 1: links made before the reveal proof; 2: salt from the link key, a
   * reveal proof (docs/share.md, "The reveal proof"); 3: as 2, the plaintext
   * a file (docs/share.md, "Envelope version 3: a file").
   */
  v: 1 | 2 | 3;
  alg: "A256GCM";
  kdf: "none" | "PBKDF2-SHA256";
  /** PBKDF2 iterations; only with kdf PBKDF2-SHA256. */
  iter?: number;
  /** base64url of the 16-byte PBKDF2 and HKDF salt; only with kdf PBKDF2-SHA256. */
  salt?: string;
  /** base64url of the 12-byte nonce. */
  iv: string;
  /** base64url of the ciphertext followed by the 16-byte GCM tag. */
  ct: string;
}

/** Thrown when an envelope does not open: wrong link key, wrong passphrase, or altered. */
export class EnvelopeError extends Error {
  /** `passphrase`: the envelope needs one and none (or a wrong one) was given; `key`: the link key or the data is wrong. */
  readonly reason: "passphrase" | "key" | "format";
  /**
   * Whether a read was spent before this failure: false when the link was
   * refused before any read (a key of the wrong shape, or the vault refused
   * the reveal proof), so the person may try again.
   */
  readonly readSpent: boolean;
  constructor(reason: "passphrase" | "key" | "format", message: string, options: { readSpent?: boolean } = {}) {
    super(message);
    this.name = "EnvelopeError";
    this.reason = reason;
    this.readSpent = options.readSpent ?? true;
  }
}

/** WebCrypto's SubtleCrypto. @throws Error where there is none (no secure context, Node before 20). */
export function subtle(): SubtleCrypto {
  const s = globalThis.crypto?.subtle;
  if (s === undefined) throw new Error("WebCrypto (crypto.subtle) is not available here: a secure context or Node 20+ is needed");
  return s;
}

/** base64url without padding (RFC 4648 section 5). */
export function toBase64Url(bytes: Uint8Array): string {
  // In chunks: a file envelope's megabytes a character at a time would be slow.
  const parts: string[] = [];
  for (let i = 0; i < bytes.length; i += 0x8000) parts.push(String.fromCharCode(...bytes.subarray(i, i + 0x8000)));
  return btoa(parts.join("")).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** Decodes base64url (padding optional). @throws EnvelopeError "format" on other characters. */
export function fromBase64Url(text: string): Bytes {
  if (!/^[A-Za-z0-9_-]*={0,2}$/.test(text)) throw new EnvelopeError("format", "not base64url");
  const b64 = text.replace(/=+$/, "").replace(/-/g, "+").replace(/_/g, "/");
  const binary = atob(b64 + "=".repeat((4 - (b64.length % 4)) % 4));
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

/** The AAD of an envelope: its header line (`ev1;...`, `ev2;...` or `ev3;...`). */
function headerOf(env: Pick<EnvelopeV1, "v" | "kdf" | "iter" | "salt">): Bytes {
  const line = env.kdf === "none" ? `ev${env.v};A256GCM;none` : `ev${env.v};A256GCM;PBKDF2-SHA256;${env.iter};${env.salt}`;
  return utf8(line);
}

const INFO_V2 = utf8("ephemeral-vault share v2");
const INFO_V2_SALT = utf8("ephemeral-vault share v2 salt");
const INFO_V2_PROOF = utf8("ephemeral-vault reveal proof v2");

/** HKDF-SHA256 (RFC 5869) of `ikm` under `salt` and `info`: `bytes` bytes. */
export async function hkdfBytes(ikm: Bytes, salt: Bytes, info: Bytes, bytes: number): Promise<Bytes> {
  const key = await subtle().importKey("raw", ikm, "HKDF", false, ["deriveBits"]);
  return new Uint8Array(await subtle().deriveBits({ name: "HKDF", hash: "SHA-256", salt, info }, key, bytes * 8));
}

/**
 * What a version-2 link derives before any read (docs/share.md, "The reveal
 * proof"): salt = HKDF(K_link, empty salt, "ephemeral-vault share v2 salt", 16);
 * with a passphrase P = PBKDF2-SHA256(passphrase in NFC, salt, 600,000, 32),
 * ikm = K_link || P (K_link alone and an empty salt without one);
 * proof = HKDF(ikm, salt, "ephemeral-vault reveal proof v2", 32);
 * content key = HKDF(ikm, salt, "ephemeral-vault share v2", 32).
 */
async function deriveV2(linkKey: Bytes, passphrase: string | undefined): Promise<{ salt: Bytes; proof: Bytes; content: CryptoKey }> {
  const s = subtle();
  let ikm = linkKey;
  let salt: Bytes = new Uint8Array(0);
  if (passphrase !== undefined) {
    salt = await hkdfBytes(linkKey, new Uint8Array(0), INFO_V2_SALT, 16);
    const base = await s.importKey("raw", utf8(passphrase.normalize("NFC")), "PBKDF2", false, ["deriveBits"]);
    const stretched = new Uint8Array(await s.deriveBits({ name: "PBKDF2", hash: "SHA-256", salt, iterations: PASSPHRASE_ITERATIONS }, base, 256));
    ikm = new Uint8Array(linkKey.length + stretched.length);
    ikm.set(linkKey);
    ikm.set(stretched, linkKey.length);
  }
  const proof = await hkdfBytes(ikm, salt, INFO_V2_PROOF, 32);
  const hkdf = await s.importKey("raw", ikm, "HKDF", false, ["deriveKey"]);
  const content = await s.deriveKey({ name: "HKDF", hash: "SHA-256", salt, info: INFO_V2 }, hkdf, { name: "AES-GCM", length: 256 }, false, [
    "encrypt",
    "decrypt",
  ]);
  return { salt, proof, content };
}

/** base64url of SHA-256 of `bytes`: a reveal check. */
async function sha256Url(bytes: Bytes): Promise<string> {
  return toBase64Url(new Uint8Array(await subtle().digest("SHA-256", bytes)));
}

/** The link key's bytes. @throws EnvelopeError "key" (readSpent false) unless 43 base64url characters of 32 bytes. */
export function linkKeyBytes(linkKey: string): Bytes {
  let bytes: Bytes;
  try {
    bytes = /^[A-Za-z0-9_-]{43}$/.test(linkKey) ? fromBase64Url(linkKey) : new Uint8Array(0);
  } catch {
    bytes = new Uint8Array(0);
  }
  if (bytes.length !== 32) {
    throw new EnvelopeError("key", "the link is incomplete or damaged (the part after # must be 43 characters)", { readSpent: false });
  }
  return bytes;
}

/** Whether `linkKey` has the shape of a link key: 43 base64url characters, 32 bytes (the recipient page's check before Reveal). */
export function isLinkKey(linkKey: string): boolean {
  try {
    linkKeyBytes(linkKey);
    return true;
  } catch {
    return false;
  }
}

/** A link made ready to reveal (prepareReveal): the proof to send, and how to open what the read returns. */
export interface PreparedReveal {
  /** The reveal proof, base64url (43 characters): the body `{"proof": ...}` of POST /s/<id>/reveal. */
  proof: string;
  /**
   * Opens the read's envelope of text: version 2 with the keys already
   * derived, version 1 as openEnvelope does.
   * @throws EnvelopeError "format" for a file (version 3): openContent opens it.
   */
  open(env: EnvelopeV1): Promise<string>;
  /** Opens the read's envelope of any version: the text (versions 1 and 2) or `{file}` (version 3). */
  openContent(env: EnvelopeV1): Promise<Opened>;
}

/** What an envelope holds, opened: the text of a version 1 or 2, or the file of a version 3. */
export type Opened = string | OpenedFile;

/** An opened file envelope (version 3). */
export interface OpenedFile {
  file: SharedFile;
}

/**
 * Derives a link's reveal proof before the read (docs/share.md, "The reveal
 * proof"), from its key and, for a link made with one, the passphrase; the
 * PBKDF2 work (about 0.2 s) is done once for the proof and the opening.
 * @param passphrase the passphrase, or undefined for a link made without one.
 * @throws EnvelopeError "key" (readSpent false) for a link key of the wrong shape.
 */
export async function prepareReveal(linkKey: string, passphrase?: string): Promise<PreparedReveal> {
  const keyBytes = linkKeyBytes(linkKey);
  const pass = passphrase === undefined || passphrase === "" ? undefined : passphrase;
  const derived = await deriveV2(keyBytes, pass);
  const openContent = async (env: EnvelopeV1): Promise<Opened> => {
    if (env.v === 1) return openEnvelope(env, linkKey, passphrase);
    if (needsPassphrase(env) && pass === undefined) throw new EnvelopeError("passphrase", "this secret needs its passphrase");
    if (needsPassphrase(env) && env.salt !== toBase64Url(derived.salt)) throw new EnvelopeError("key", "the envelope's salt is not its link's");
    const plain = await decryptWith(env, derived.content);
    if (env.v === 3) {
      try {
        return { file: decodeFilePayload(plain) };
      } catch (err) {
        throw new EnvelopeError("format", (err as Error).message);
      }
    }
    return textOf(plain);
  };
  return {
    proof: toBase64Url(derived.proof),
    openContent,
    open: async (env) => {
      const opened = await openContent(env);
      if (typeof opened !== "string") throw new EnvelopeError("format", "this link holds a file, not text");
      return opened;
    },
  };
}

/** The UTF-8 text of a plaintext. @throws EnvelopeError "format" for bytes that are not UTF-8. */
function textOf(plain: Uint8Array): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(plain);
  } catch {
    throw new EnvelopeError("format", "the secret is not UTF-8 text");
  }
}

/** AES-256-GCM opening of `env` under `key`: the plaintext's bytes. @throws EnvelopeError "passphrase" or "key". */
async function decryptWith(env: EnvelopeV1, key: CryptoKey): Promise<Uint8Array> {
  try {
    return new Uint8Array(await subtle().decrypt({ name: "AES-GCM", iv: fromBase64Url(env.iv), additionalData: headerOf(env) }, key, fromBase64Url(env.ct)));
  } catch {
    throw needsPassphrase(env)
      ? new EnvelopeError("passphrase", "wrong passphrase (or a damaged link)")
      : new EnvelopeError("key", "the link's key does not open this secret (a damaged or altered link)");
  }
}

async function contentKey(linkKey: Bytes, passphrase: string | undefined, salt: Bytes, iterations: number): Promise<CryptoKey> {
  const s = subtle();
  let ikm = linkKey;
  if (passphrase !== undefined) {
    const base = await s.importKey("raw", utf8(passphrase.normalize("NFC")), "PBKDF2", false, ["deriveBits"]);
    const stretched = new Uint8Array(await s.deriveBits({ name: "PBKDF2", hash: "SHA-256", salt, iterations }, base, 256));
    ikm = new Uint8Array(linkKey.length + stretched.length);
    ikm.set(linkKey);
    ikm.set(stretched, linkKey.length);
  }
  const hkdf = await s.importKey("raw", ikm, "HKDF", false, ["deriveKey"]);
  return s.deriveKey({ name: "HKDF", hash: "SHA-256", salt, info: INFO }, hkdf, { name: "AES-GCM", length: 256 }, false, ["encrypt", "decrypt"]);
}

/** Test seam: fixed random bytes for the published test vectors (docs/share.md). */
export interface SealRandomness {
  linkKey: Bytes;
  iv: Bytes;
  salt?: Bytes;
}

/**
 * Encrypts `value` into an envelope under a fresh link key (and the
 * passphrase, when given): version 2 (docs/share.md, "The reveal proof"),
 * or version 1 with `version: 1` (links as made before the reveal proof).
 * @param options.passphrase optional; adds PBKDF2-SHA256 (600,000
 *   iterations; `iterations` applies to version 1 only).
 * @returns `envelope`, the JSON text to store as the secret's value,
 *   `linkKey`, the 43-character base64url key for the link's fragment, and
 *   (version 2) `revealCheck`, the SHA-256 of the reveal proof in base64url,
 *   to send as the create's `reveal_check`.
 */
export async function sealEnvelope(
  value: string,
  options: { passphrase?: string | undefined; iterations?: number; random?: SealRandomness; version?: 1 | 2 } = {},
): Promise<{ envelope: string; linkKey: string; revealCheck?: string }> {
  const rand = (n: number): Bytes => globalThis.crypto.getRandomValues(new Uint8Array(n));
  const linkKey = options.random?.linkKey ?? rand(32);
  const iv = options.random?.iv ?? rand(12);
  const pass = options.passphrase !== undefined && options.passphrase !== "";
  if (options.version !== 1) return sealProofed(2, utf8(value), linkKey, iv, pass ? options.passphrase : undefined);
  const iterations = options.iterations ?? PASSPHRASE_ITERATIONS;
  const salt = pass ? (options.random?.salt ?? rand(16)) : new Uint8Array(0);
  const head: Pick<EnvelopeV1, "v" | "kdf" | "iter" | "salt"> = pass ? { v: 1, kdf: "PBKDF2-SHA256", iter: iterations, salt: toBase64Url(salt) } : { v: 1, kdf: "none" };
  const key = await contentKey(linkKey, pass ? options.passphrase : undefined, salt, iterations);
  const ct = new Uint8Array(await subtle().encrypt({ name: "AES-GCM", iv, additionalData: headerOf(head) }, key, utf8(value)));
  const env: EnvelopeV1 = { v: 1, alg: "A256GCM", kdf: head.kdf, ...(pass ? { iter: head.iter, salt: head.salt } : {}), iv: toBase64Url(iv), ct: toBase64Url(ct) };
  return { envelope: JSON.stringify(env), linkKey: toBase64Url(linkKey) };
}

/**
 * Seals `plain` as an envelope of version 2 or 3: the keys and proof of
 * version 2 (docs/share.md, "Envelope version 2"), the version in the header.
 */
async function sealProofed(
  v: 2 | 3,
  plain: Bytes,
  linkKey: Bytes,
  iv: Bytes,
  passphrase: string | undefined,
): Promise<{ envelope: string; linkKey: string; revealCheck: string }> {
  const derived = await deriveV2(linkKey, passphrase);
  const head: Pick<EnvelopeV1, "v" | "kdf" | "iter" | "salt"> =
    passphrase !== undefined ? { v, kdf: "PBKDF2-SHA256", iter: PASSPHRASE_ITERATIONS, salt: toBase64Url(derived.salt) } : { v, kdf: "none" };
  const ct = new Uint8Array(await subtle().encrypt({ name: "AES-GCM", iv, additionalData: headerOf(head) }, derived.content, plain));
  const extra = passphrase !== undefined ? { iter: head.iter, salt: head.salt } : {};
  const env: EnvelopeV1 = { v, alg: "A256GCM", kdf: head.kdf, ...extra, iv: toBase64Url(iv), ct: toBase64Url(ct) };
  return { envelope: JSON.stringify(env), linkKey: toBase64Url(linkKey), revealCheck: await sha256Url(derived.proof) };
}

/**
 * Encrypts a file into an envelope of version 3 (docs/share.md, "Envelope
 * version 3: a file") under a fresh link key (and the passphrase, when
 * given): the keys and reveal proof of version 2; the plaintext the
 * 1024-byte metadata block (name and type) then the bytes (file-payload.ts).
 * @param options.random test seam: fixed link key and nonce (the published vectors).
 * @returns as sealEnvelope: `envelope` (the JSON text to store), `linkKey`, `revealCheck`.
 * @throws Error for a name of 0 or over 255 UTF-8 bytes, or a type that is no media type.
 */
export async function sealFileEnvelope(
  file: SharedFile,
  options: { passphrase?: string | undefined; random?: SealRandomness } = {},
): Promise<{ envelope: string; linkKey: string; revealCheck: string }> {
  const plain = encodeFilePayload(file);
  const rand = (n: number): Bytes => globalThis.crypto.getRandomValues(new Uint8Array(n));
  const pass = options.passphrase !== undefined && options.passphrase !== "" ? options.passphrase : undefined;
  return sealProofed(3, plain, options.random?.linkKey ?? rand(32), options.random?.iv ?? rand(12), pass);
}

/**
 * A stored value's JSON object, as an envelope is stored (this file's and
 * request-envelope.ts's).
 * @returns the object's fields, or undefined when `text` is not a JSON object (a plain value).
 */
export function jsonObject(text: string): Record<string, unknown> | undefined {
  if (!text.startsWith("{")) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  return parsed !== null && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
}

/**
 * Parses a stored value as a version-1 envelope.
 * @returns the envelope, or undefined when `text` is not one (a plain value).
 */
export function parseEnvelope(text: string): EnvelopeV1 | undefined {
  const e = jsonObject(text);
  if (e === undefined) return undefined;
  if ((e.v !== 1 && e.v !== 2 && e.v !== 3) || e.alg !== "A256GCM" || typeof e.iv !== "string" || typeof e.ct !== "string") return undefined;
  const v = e.v;
  if (e.kdf === "none") return { v, alg: "A256GCM", kdf: "none", iv: e.iv, ct: e.ct };
  if (e.kdf === "PBKDF2-SHA256" && typeof e.iter === "number" && Number.isInteger(e.iter) && typeof e.salt === "string") {
    // Versions 2 and 3 derive their proof before the read, so their count is fixed.
    if (v !== 1 && e.iter !== PASSPHRASE_ITERATIONS) return undefined;
    return { v, alg: "A256GCM", kdf: "PBKDF2-SHA256", iter: e.iter, salt: e.salt, iv: e.iv, ct: e.ct };
  }
  return undefined;
}

/** True when the envelope needs a passphrase besides the link key. */
export function needsPassphrase(env: EnvelopeV1): boolean {
  return env.kdf !== "none";
}

/**
 * Decrypts an envelope with the link key from the fragment (and the
 * passphrase when the envelope has one).
 * @returns the value.
 * @throws EnvelopeError "passphrase" when one is needed and missing or wrong
 *   (a wrong passphrase and a wrong link key cannot be told apart then),
 *   "key" when the link key is malformed or does not open it, "format" for
 *   an iteration count outside 100,000-10,000,000 or a file (version 3:
 *   openEnvelopeContent opens it).
 */
export async function openEnvelope(env: EnvelopeV1, linkKey: string, passphrase?: string): Promise<string> {
  if (env.v === 3) throw new EnvelopeError("format", "this link holds a file, not text (openEnvelopeContent opens it)");
  if (env.v === 2) {
    if (needsPassphrase(env) && (passphrase === undefined || passphrase === "")) throw new EnvelopeError("passphrase", "this secret needs its passphrase");
    return (await prepareReveal(linkKey, needsPassphrase(env) ? passphrase : undefined)).open(env);
  }
  const keyBytes = fromBase64Url(linkKey);
  if (keyBytes.length !== 32) throw new EnvelopeError("key", "the link's key is incomplete (the part after # must be 43 characters)");
  const pass = needsPassphrase(env);
  if (pass && (passphrase === undefined || passphrase === "")) throw new EnvelopeError("passphrase", "this secret needs its passphrase");
  const iterations = env.iter ?? 0;
  if (pass && (iterations < MIN_ITERATIONS || iterations > MAX_ITERATIONS)) throw new EnvelopeError("format", "the envelope's iteration count is out of range");
  const salt = pass ? fromBase64Url(env.salt ?? "") : new Uint8Array(0);
  const key = await contentKey(keyBytes, pass ? passphrase : undefined, salt, iterations);
  try {
    const plain = await subtle().decrypt({ name: "AES-GCM", iv: fromBase64Url(env.iv), additionalData: headerOf(env) }, key, fromBase64Url(env.ct));
    return new TextDecoder("utf-8", { fatal: true }).decode(plain);
  } catch {
    throw pass
      ? new EnvelopeError("passphrase", "wrong passphrase (or a damaged link)")
      : new EnvelopeError("key", "the link's key does not open this secret (a damaged or altered link)");
  }
}

/**
 * Decrypts an envelope of any version with the link key (and the
 * passphrase when it has one): the text of version 1 or 2, `{file}` of
 * version 3 (docs/share.md, "Envelope version 3: a file").
 * @throws EnvelopeError as openEnvelope, and "format" for a file whose
 *   metadata block is out of shape.
 */
export async function openEnvelopeContent(env: EnvelopeV1, linkKey: string, passphrase?: string): Promise<Opened> {
  if (env.v === 1) return openEnvelope(env, linkKey, passphrase);
  if (needsPassphrase(env) && (passphrase === undefined || passphrase === "")) throw new EnvelopeError("passphrase", "this secret needs its passphrase");
  return (await prepareReveal(linkKey, needsPassphrase(env) ? passphrase : undefined)).openContent(env);
}
