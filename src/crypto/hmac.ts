/**
 * HMAC-SHA256 (RFC 2104, FIPS 198-1) from two one-shot SHA-256 digests,
 * `H((K ^ opad) || H((K ^ ipad) || m))`, for the hot path: the audit chain
 * (one HMAC per audit row) and HKDF (two per record key derived).
 *
 * `createHmac` builds an Hmac object per call, and each one is a weak handle
 * that every scavenge of V8's young generation has to process. `crypto.hash`
 * (Node.js 20.12 and 21.7 on) makes no object (docs/performance.md, "Fresh
 * objects, not a leading spread; HMAC from cached pads"). On older
 * Node.js 20 releases, without `crypto.hash`, createHmac is used, which
 * gives the same bytes; test/crypto/hmac.test.ts holds this module to RFC 4231's
 * test vectors and to createHmac.
 */
import { createHash, createHmac } from "node:crypto";
import { oneShotHash } from "./tokens.js";

/** SHA-256's block size, bytes: the length of the pads. */
const BLOCK = 64;
/** SHA-256's digest size, bytes. */
const DIGEST = 32;

/** The HMAC key as RFC 2104 uses it: a key longer than a block is hashed first; shorter ones are zero-padded by the pads. */
function blockKey(key: Uint8Array): Uint8Array {
  return key.length > BLOCK ? createHash("sha256").update(key).digest() : key;
}

/** Writes `key ^ pad` (zero-padded to a block) into `out` at 0. */
function writePad(out: Buffer, key: Uint8Array, pad: number): void {
  for (let i = 0; i < BLOCK; i++) out[i] = (i < key.length ? (key[i] as number) : 0) ^ pad;
}

/**
 * HMAC-SHA256 under one fixed key, for many messages: the pads are computed
 * once, and the message is written after the inner pad in a buffer kept
 * between calls. Not reentrant across awaits (there are none inside).
 */
export class HmacSha256 {
  private readonly key: Uint8Array;
  /** `K ^ ipad` then the message; grown when a message does not fit. */
  private inner: Buffer;
  /** `K ^ opad` then the inner digest. */
  private readonly outer = Buffer.alloc(BLOCK + DIGEST);

  /** @param key the HMAC key, any length (RFC 2104 section 2). */
  constructor(key: Uint8Array) {
    this.key = blockKey(key);
    this.inner = Buffer.alloc(BLOCK + 1024);
    writePad(this.inner, this.key, 0x36);
    writePad(this.outer, this.key, 0x5c);
  }

  /**
   * HMAC-SHA256 of the UTF-8 encoding of `text`.
   * @returns 64 lower-case hex characters.
   */
  hex(text: string): string {
    if (oneShotHash === undefined) return createHmac("sha256", this.key).update(text, "utf8").digest("hex");
    // UTF-8 takes at most 3 bytes per UTF-16 code unit.
    if (BLOCK + text.length * 3 > this.inner.length) {
      const grown = Buffer.alloc(BLOCK + text.length * 3);
      this.inner.copy(grown, 0, 0, BLOCK);
      this.inner = grown;
    }
    const length = this.inner.write(text, BLOCK, "utf8");
    const innerDigest = oneShotHash("sha256", this.inner.subarray(0, BLOCK + length), "latin1") as string;
    this.outer.write(innerDigest, BLOCK, "latin1");
    return oneShotHash("sha256", this.outer, "hex") as string;
  }
}

/** Scratch for hmacSha256: a pad and the message, grown as needed. */
let scratch = Buffer.alloc(BLOCK + 128);

/**
 * HMAC-SHA256 of `data` under `key`, each call with its own key (HKDF:
 * RFC 5869 Extract and Expand). The scratch it works in is zeroed before
 * it returns.
 * @returns the 32-byte MAC, a new Buffer.
 */
export function hmacSha256(key: Uint8Array, data: Uint8Array): Buffer {
  if (oneShotHash === undefined) return createHmac("sha256", key).update(data).digest();
  const k = blockKey(key);
  const need = BLOCK + Math.max(data.length, DIGEST);
  if (need > scratch.length) scratch = Buffer.alloc(need);
  writePad(scratch, k, 0x36);
  scratch.set(data, BLOCK);
  const innerDigest = oneShotHash("sha256", scratch.subarray(0, BLOCK + data.length), "latin1") as string;
  writePad(scratch, k, 0x5c);
  scratch.write(innerDigest, BLOCK, "latin1");
  const mac = oneShotHash("sha256", scratch.subarray(0, BLOCK + DIGEST), "buffer") as Buffer;
  // HKDF passes the root key as `data`: no copy of key material is left behind in the scratch.
  scratch.fill(0, 0, need);
  return mac;
}
