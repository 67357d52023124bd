/**
 * The answer envelope of a request, version 1 (docs/requests.md, "The
 * envelope"): what the answer page `/r/<id>` stores when a person answers a
 * request, encrypted in their browser to the asker's public key, so that the
 * vault only ever holds ciphertext and only the holder of the asker's
 * private key opens it.
 *
 * One implementation for every side, as the share envelope (envelope.ts):
 * WebCrypto (`globalThis.crypto.subtle`), which browsers and Node 20+ have.
 *
 * - asker key pair: ECDH on P-256, made on the asker's side. Public key:
 *   the 65-byte uncompressed point (SEC 1, 0x04 || x || y), base64url
 *   (87 characters). Private key: d || x || y (96 bytes), base64url
 *   (128 characters); it never reaches the server.
 * - per answer: a fresh ephemeral P-256 key pair; Z = ECDH(ephemeral
 *   private, asker public), the 32-byte x-coordinate;
 * - content key: HKDF-SHA256(ikm = Z, salt = ephemeral public || asker
 *   public (130 bytes), info = "ephemeral-vault request v1", 32 bytes)
 *   (RFC 5869);
 * - AES-256-GCM with a fresh 96-bit nonce; AAD = the header line
 *   `evr1;ECDH-P256;A256GCM;<request id>;<epk>`, so an answer moved to
 *   another request, or a changed ephemeral key, fails the tag.
 * - the reveal proof: HKDF-SHA256(ikm = d, salt = the asker's public point
 *   (65 bytes), info = "ephemeral-vault request proof v1", 32 bytes); the
 *   request is made with `reveal_check` = base64url(SHA-256(proof)) (before
 *   the vault names the request, so the id cannot be in it), so only the holder
 *   of the private key can spend the answer's read (docs/share.md, "The
 *   reveal proof", is the same rule for share links).
 *
 * The stored value is the compact JSON
 * `{"v":1,"alg":"ECDH-P256+A256GCM","epk","iv","ct"}` with `epk` (the
 * ephemeral public point), `iv` and `ct` (ciphertext then the 16-byte tag)
 * in base64url.
 */
import { EnvelopeError, fromBase64Url, jsonObject, toBase64Url, utf8 } from "./envelope.js";

/** Bytes over a plain ArrayBuffer, as WebCrypto takes them. */
type Bytes = Uint8Array<ArrayBuffer>;

/** The answer envelope as stored (docs/requests.md, "The envelope"). */
export interface AnswerEnvelope {
  v: 1;
  alg: "ECDH-P256+A256GCM";
  /** base64url of the ephemeral public key, 65 bytes uncompressed. */
  epk: string;
  /** base64url of the 12-byte nonce. */
  iv: string;
  /** base64url of the ciphertext followed by the 16-byte GCM tag. */
  ct: string;
}

/** An asker's key pair, both halves base64url (docs/requests.md, "The envelope"). */
export interface RequestKeys {
  /** The 65-byte uncompressed P-256 point: what `POST /requests` takes as `public_key`. */
  publicKey: string;
  /** d || x || y, 96 bytes: kept by the asker only. */
  privateKey: string;
}

const ALG = "ECDH-P256+A256GCM";
const CURVE = { name: "ECDH", namedCurve: "P-256" } as const;
const POINT_BYTES = 65;
const COORD_BYTES = 32;

const INFO = utf8("ephemeral-vault request v1");
const INFO_PROOF = utf8("ephemeral-vault request proof v1");

function subtle(): SubtleCrypto {
  const s = globalThis.crypto?.subtle;
  if (s === undefined) throw new Error("WebCrypto (crypto.subtle) is not available here: a secure context or Node 20+ is needed");
  return s;
}

/** `a` then `b`, one array. */
function concat(a: Uint8Array, b: Uint8Array): Bytes {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

/** base64url to bytes; anything that does not decode is EnvelopeError `reason` (a key, or the envelope's format). */
function decode(text: string, reason: "key" | "format"): Bytes {
  try {
    return fromBase64Url(text);
  } catch {
    throw new EnvelopeError(reason, "not base64url");
  }
}

/** The AAD of an answer: its header line, naming the request and the ephemeral key. */
function headerOf(requestId: string, epk: string): Bytes {
  return utf8(`evr1;ECDH-P256;A256GCM;${requestId};${epk}`);
}

/** The 65-byte point of a public key in base64url. @throws EnvelopeError "key" when it is not one. */
function publicPoint(publicKey: string): Bytes {
  const point = decode(publicKey, "key");
  if (point.length !== POINT_BYTES || point[0] !== 4) throw new EnvelopeError("key", "not a P-256 public key (65 bytes, uncompressed, base64url)");
  return point;
}

/** Imports a public point; WebCrypto checks that it is on the curve. @throws EnvelopeError "key". */
async function importPublic(point: Bytes): Promise<CryptoKey> {
  try {
    return await subtle().importKey("raw", point, CURVE, true, []);
  } catch {
    throw new EnvelopeError("key", "not a point of P-256");
  }
}

/** The parts of a private key in base64url (d || x || y). @throws EnvelopeError "key". */
function privateParts(privateKey: string): { d: Bytes; point: Bytes } {
  const bytes = decode(privateKey, "key");
  if (bytes.length !== 3 * COORD_BYTES) throw new EnvelopeError("key", "the private key is incomplete (it must be 128 base64url characters)");
  return { d: bytes.slice(0, COORD_BYTES), point: concat(Uint8Array.of(4), bytes.slice(COORD_BYTES)) };
}

/** Imports d || x || y as an ECDH private key. @throws EnvelopeError "key" when the halves do not belong together. */
async function importPrivate(privateKey: string): Promise<{ key: CryptoKey; d: Bytes; point: Bytes }> {
  const { d, point } = privateParts(privateKey);
  const jwk = { kty: "EC", crv: "P-256", d: toBase64Url(d), x: toBase64Url(point.slice(1, 33)), y: toBase64Url(point.slice(33)), ext: true };
  try {
    return { key: await subtle().importKey("jwk", jwk, CURVE, false, ["deriveBits"]), d, point };
  } catch {
    throw new EnvelopeError("key", "not a P-256 private key");
  }
}

/** A key pair exported as RequestKeys. */
async function exportPair(pair: CryptoKeyPair): Promise<RequestKeys> {
  const jwk = await subtle().exportKey("jwk", pair.privateKey);
  const point = new Uint8Array(await subtle().exportKey("raw", pair.publicKey));
  const d = fromBase64Url(jwk.d ?? "");
  return { publicKey: toBase64Url(point), privateKey: toBase64Url(concat(d, point.slice(1))) };
}

/**
 * Makes an asker's key pair (ECDH P-256) on this side: the browser's or
 * Node's WebCrypto. The private key never leaves the caller.
 * @returns both halves in base64url (RequestKeys).
 */
export async function generateRequestKeys(): Promise<RequestKeys> {
  return exportPair((await subtle().generateKey(CURVE, true, ["deriveBits"])) as CryptoKeyPair);
}

/** HKDF-SHA256 (RFC 5869): `bytes` bytes. */
async function hkdfBytes(ikm: Bytes, salt: Bytes, info: Bytes, bytes: number): Promise<Bytes> {
  const key = await subtle().importKey("raw", ikm, "HKDF", false, ["deriveBits"]);
  return new Uint8Array(await subtle().deriveBits({ name: "HKDF", hash: "SHA-256", salt, info }, key, bytes * 8));
}

/** The AES-256-GCM content key of an answer from the shared secret and both public points. */
async function contentKey(shared: Bytes, epk: Bytes, askerPoint: Bytes): Promise<CryptoKey> {
  const raw = await hkdfBytes(shared, concat(epk, askerPoint), INFO, 32);
  return subtle().importKey("raw", raw, { name: "AES-GCM" }, false, ["encrypt", "decrypt"]);
}

/**
 * The reveal proof of a request's answer and its check (docs/requests.md,
 * "The envelope"): proof = HKDF-SHA256(d, the asker's public point (65
 * bytes), "ephemeral-vault request proof v1", 32), check = SHA-256(proof),
 * both base64url. It needs no request id: the check is sent with
 * `POST /requests`, before the vault names the request.
 * @throws EnvelopeError "key" for a malformed private key.
 */
export async function requestRevealProof(privateKey: string): Promise<{ proof: string; revealCheck: string }> {
  const { d, point } = await importPrivate(privateKey);
  const proof = await hkdfBytes(d, point, INFO_PROOF, 32);
  const check = new Uint8Array(await subtle().digest("SHA-256", proof));
  return { proof: toBase64Url(proof), revealCheck: toBase64Url(check) };
}

/** Test seam: a fixed ephemeral key (RequestKeys' privateKey form) and nonce, for the published test vectors. */
export interface AnswerRandomness {
  ephemeralPrivateKey: string;
  iv: Bytes;
}

/**
 * Encrypts `value` (any string, byte-exact as UTF-8) to the asker's public
 * key for one request.
 * @param publicKey the request's `public_key` (base64url, 65 bytes).
 * @param requestId the request's id: bound in the AAD.
 * @returns the envelope's JSON text, to post as the answer.
 * @throws EnvelopeError "key" when `publicKey` is not a P-256 point.
 */
export async function sealAnswer(publicKey: string, requestId: string, value: string, options: { random?: AnswerRandomness } = {}): Promise<string> {
  const askerPoint = publicPoint(publicKey);
  const asker = await importPublic(askerPoint);
  const ephemeral =
    options.random === undefined
      ? await importPrivate((await generateRequestKeys()).privateKey)
      : await importPrivate(options.random.ephemeralPrivateKey);
  const shared = new Uint8Array(await subtle().deriveBits({ name: "ECDH", public: asker }, ephemeral.key, 256));
  const key = await contentKey(shared, ephemeral.point, askerPoint);
  const iv = options.random?.iv ?? globalThis.crypto.getRandomValues(new Uint8Array(12));
  const epk = toBase64Url(ephemeral.point);
  const ct = new Uint8Array(await subtle().encrypt({ name: "AES-GCM", iv, additionalData: headerOf(requestId, epk) }, key, utf8(value)));
  const envelope: AnswerEnvelope = { v: 1, alg: ALG, epk, iv: toBase64Url(iv), ct: toBase64Url(ct) };
  return JSON.stringify(envelope);
}

/**
 * Parses a stored answer as an answer envelope.
 * @returns the envelope, or undefined when `text` is not one.
 */
export function parseAnswerEnvelope(text: string): AnswerEnvelope | undefined {
  const e = jsonObject(text);
  if (e === undefined || e.v !== 1 || e.alg !== ALG || typeof e.epk !== "string" || typeof e.iv !== "string" || typeof e.ct !== "string") return undefined;
  return { v: 1, alg: ALG, epk: e.epk, iv: e.iv, ct: e.ct };
}

/**
 * Decrypts an answer with the asker's private key.
 * @param envelope the stored answer (JSON text, or parsed).
 * @returns the value, byte-exact.
 * @throws EnvelopeError "format" when it is not an answer envelope, "key"
 *   when the private key is malformed, or does not open it (another
 *   request's answer, another key, or altered).
 */
export async function openAnswer(privateKey: string, requestId: string, envelope: string | AnswerEnvelope): Promise<string> {
  const env = typeof envelope === "string" ? parseAnswerEnvelope(envelope) : envelope;
  if (env === undefined) throw new EnvelopeError("format", "not an answer envelope");
  const asker = await importPrivate(privateKey);
  const epkPoint = publicPoint(env.epk);
  const ephemeral = await importPublic(epkPoint);
  const shared = new Uint8Array(await subtle().deriveBits({ name: "ECDH", public: ephemeral }, asker.key, 256));
  const key = await contentKey(shared, epkPoint, asker.point);
  const iv = decode(env.iv, "format");
  const ct = decode(env.ct, "format");
  try {
    const plain = await subtle().decrypt({ name: "AES-GCM", iv, additionalData: headerOf(requestId, env.epk) }, key, ct);
    return new TextDecoder("utf-8", { fatal: true }).decode(plain);
  } catch {
    throw new EnvelopeError("key", "this private key does not open this answer (another request's, another key's, or altered)");
  }
}
