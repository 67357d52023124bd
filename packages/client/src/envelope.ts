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
 */

/** PBKDF2 iterations for a passphrase (OWASP's 2023 figure for PBKDF2-HMAC-SHA256). */
export const PASSPHRASE_ITERATIONS = 600_000;

/** Fewest PBKDF2 iterations an envelope may ask for when opened (a forged low count is refused). */
const MIN_ITERATIONS = 100_000;
/** Most PBKDF2 iterations an envelope may ask for when opened (bounds the work a link can cause). */
const MAX_ITERATIONS = 10_000_000;

/** Bytes over a plain ArrayBuffer, as WebCrypto takes them. */
type Bytes = Uint8Array<ArrayBuffer>;

/** UTF-8 bytes of `text`. */
const utf8 = (text: string): Bytes => {
  const encoded = new TextEncoder().encode(text);
  const out = new Uint8Array(encoded.length);
  out.set(encoded);
  return out;
};

const INFO = utf8("ephemeral-vault share v1");

/** A version-1 envelope, as stored (docs/share.md). */
export interface EnvelopeV1 {
  v: 1;
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
  constructor(reason: "passphrase" | "key" | "format", message: string) {
    super(message);
    this.name = "EnvelopeError";
    this.reason = reason;
  }
}

function subtle(): SubtleCrypto {
  const s = globalThis.crypto?.subtle;
  if (s === undefined) throw new Error("WebCrypto (crypto.subtle) is not available here: a secure context or Node 20+ is needed");
  return s;
}

/** base64url without padding (RFC 4648 section 5). */
export function toBase64Url(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
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

/** The AAD of an envelope: its header line. */
function headerOf(env: Pick<EnvelopeV1, "kdf" | "iter" | "salt">): Bytes {
  const line = env.kdf === "none" ? "ev1;A256GCM;none" : `ev1;A256GCM;PBKDF2-SHA256;${env.iter};${env.salt}`;
  return utf8(line);
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
 * Encrypts `value` into a version-1 envelope under a fresh link key (and
 * the passphrase, when given).
 * @param options.passphrase optional; adds PBKDF2-SHA256 with `iterations` (default 600,000).
 * @returns `envelope`, the JSON text to store as the secret's value, and
 * `linkKey`, the 43-character base64url key for the link's fragment.
 */
export async function sealEnvelope(
  value: string,
  options: { passphrase?: string | undefined; iterations?: number; random?: SealRandomness } = {},
): Promise<{ envelope: string; linkKey: string }> {
  const rand = (n: number): Bytes => globalThis.crypto.getRandomValues(new Uint8Array(n));
  const linkKey = options.random?.linkKey ?? rand(32);
  const iv = options.random?.iv ?? rand(12);
  const pass = options.passphrase !== undefined && options.passphrase !== "";
  const iterations = options.iterations ?? PASSPHRASE_ITERATIONS;
  const salt = pass ? (options.random?.salt ?? rand(16)) : new Uint8Array(0);
  const head: Pick<EnvelopeV1, "kdf" | "iter" | "salt"> = pass ? { kdf: "PBKDF2-SHA256", iter: iterations, salt: toBase64Url(salt) } : { kdf: "none" };
  const key = await contentKey(linkKey, pass ? options.passphrase : undefined, salt, iterations);
  const ct = new Uint8Array(await subtle().encrypt({ name: "AES-GCM", iv, additionalData: headerOf(head) }, key, utf8(value)));
  const env: EnvelopeV1 = { v: 1, alg: "A256GCM", ...head, iv: toBase64Url(iv), ct: toBase64Url(ct) };
  return { envelope: JSON.stringify(env), linkKey: toBase64Url(linkKey) };
}

/**
 * Parses a stored value as a version-1 envelope.
 * @returns the envelope, or undefined when `text` is not one (a plain value).
 */
export function parseEnvelope(text: string): EnvelopeV1 | undefined {
  if (!text.startsWith("{")) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (parsed === null || typeof parsed !== "object") return undefined;
  const e = parsed as Record<string, unknown>;
  if (e.v !== 1 || e.alg !== "A256GCM" || typeof e.iv !== "string" || typeof e.ct !== "string") return undefined;
  if (e.kdf === "none") return { v: 1, alg: "A256GCM", kdf: "none", iv: e.iv, ct: e.ct };
  if (e.kdf === "PBKDF2-SHA256" && typeof e.iter === "number" && Number.isInteger(e.iter) && typeof e.salt === "string") {
    return { v: 1, alg: "A256GCM", kdf: "PBKDF2-SHA256", iter: e.iter, salt: e.salt, iv: e.iv, ct: e.ct };
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
 *   an iteration count outside 100,000-10,000,000.
 */
export async function openEnvelope(env: EnvelopeV1, linkKey: string, passphrase?: string): Promise<string> {
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
