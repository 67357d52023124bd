/**
 * Ids, bearer tokens and their hashes (docs/contract.md §4): resource ids,
 * public secret ids, tokens stored only as their SHA-256, the constant-time
 * master key check, webhook signatures. The envelope encryption of secret
 * values is cipher.ts.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import * as nodeCrypto from "node:crypto";
import { randomBytesPooled } from "./random.js";

/** `crypto.hash(algorithm, data, outputEncoding)`; a string `data` is hashed as UTF-8. */
export type OneShotHash = (algorithm: string, data: string | Uint8Array, outputEncoding: "hex" | "latin1" | "buffer") => string | Buffer;
/**
 * `crypto.hash` (Node.js 20.12 and 21.7 on): a digest in one call, without
 * a Hash object, so cheaper for a short input than
 * createHash().update().digest() (docs/performance.md, "Smaller things on
 * the hot path").
 * Undefined on older Node.js 20 releases, where callers use createHash or
 * createHmac (here and in hmac.ts).
 */
export const oneShotHash = (nodeCrypto as unknown as { hash?: OneShotHash }).hash;

/** SHA-256 (FIPS 180-4) of a UTF-8 string, as 32 bytes. */
export function sha256(text: string): Buffer {
  if (oneShotHash !== undefined) return oneShotHash("sha256", text, "buffer") as Buffer;
  return createHash("sha256").update(text, "utf8").digest();
}

/** SHA-256 (FIPS 180-4) of a UTF-8 string, as 64 lower-case hex characters. */
export function sha256Hex(text: string): string {
  if (oneShotHash !== undefined) return oneShotHash("sha256", text, "hex") as string;
  return createHash("sha256").update(text, "utf8").digest("hex");
}

const BASE32 = "abcdefghijklmnopqrstuvwxyz234567";

/** Lower-case RFC 4648 base32 without padding. */
export function base32(bytes: Uint8Array): string {
  let out = "";
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(buffer << (5 - bits)) & 31];
  return out;
}

/**
 * A new resource id: type prefix and 16 random bytes in base32, e.g.
 * `org_` + 26 characters (docs/contract.md §4).
 */
export function newId(prefix: "org_" | "prn_" | "pk_" | "sk_" | "wh_" | "evt_"): string {
  return prefix + base32(randomBytes(16));
}

/**
 * A new bearer token: prefix and 43 base64url characters of 32 random bytes
 * (docs/contract.md §4). Store only hashToken() of it.
 */
export function newToken(prefix: "vsk_" | "vpk_"): string {
  return prefix + randomBytes(32).toString("base64url");
}

/** A public secret id: 64 lower-case hex characters, 256 random bits. */
export function newPublicId(): string {
  return randomBytesPooled(32).toString("hex");
}

/** SHA-256 of a token, hex: the only form in which tokens are stored. */
export function hashToken(token: string): string {
  return sha256Hex(token);
}

/**
 * Constant-time matching against one fixed secret (the master key): its
 * SHA-256 is computed once, each candidate is hashed and compared with
 * timingSafeEqual, so neither content nor length leaks through timing.
 */
export class SecretMatcher {
  private readonly digest: Buffer;

  constructor(secret: string) {
    this.digest = sha256(secret);
  }

  /** True when `candidate` equals the secret. */
  matches(candidate: string): boolean {
    return timingSafeEqual(sha256(candidate), this.digest);
  }
}

/** Hex HMAC-SHA256 of `body` keyed with `secret` (webhook signatures, hash chains). */
export function hmacHex(secret: string | Buffer, body: string | Buffer): string {
  return createHmac("sha256", secret).update(body).digest("hex");
}

/** A random printable secret for generated master keys and webhook secrets: 32 bytes base64url. */
export function randomSecret(): string {
  return randomBytes(32).toString("base64url");
}
