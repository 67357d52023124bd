import { hmacSha256 } from "./hmac.js";

/** The HKDF info of a record key (cipher.ts ValueCipher: HKDF-SHA256(root, salt, info)). */
export const RECORD_KEY_INFO = Buffer.from("ephemeral-vault/v1/record-key");

/** `info || 0x01`: the input of HKDF-Expand's first (and, for 32 bytes, only) block. */
const RECORD_KEY_INFO_BLOCK1 = Buffer.concat([RECORD_KEY_INFO, Buffer.from([1])]);

/**
 * HKDF-SHA256 (RFC 5869) with an output of one hash block (32 bytes), as two
 * HMACs: PRK = HMAC(salt, ikm) (Extract), OKM = HMAC(PRK, info || 0x01)
 * (Expand, T(1)). Byte-identical to hkdfSync("sha256", ikm, salt, info, 32),
 * at a fraction of its cost (no KeyObject, no generic L-block loop; and no
 * Hmac object: hmac.ts).
 * @param info the HKDF info (the record-key info's block input is precomputed).
 * @returns the 32-byte derived key.
 */
export function hkdfSha256Block(ikm: Buffer, salt: Buffer, info: Buffer): Buffer {
  const block = info === RECORD_KEY_INFO ? RECORD_KEY_INFO_BLOCK1 : Buffer.concat([info, Buffer.from([1])]);
  return hmacSha256(hmacSha256(salt, ikm), block);
}
