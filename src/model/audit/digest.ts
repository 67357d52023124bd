import { HmacSha256 } from "../../crypto/hmac.js";
import { sha256Hex } from "../../crypto/tokens.js";

/**
 * The digest under the keyed audit chain (docs/audit.md, "Tamper evidence"): its rows'
 * hashes (chain.ts), its heads' MACs (head.ts) and the anchors' MACs
 * (domain/audit/anchor.ts) are all HMAC-SHA256 under a chain key, or plain SHA-256 for rows
 * written before the chain was keyed.
 */

/** Root key id -> chain key, for every root key loaded (ValueCipher.auditChainKeys). */
export type ChainKeys = ReadonlyMap<string, Buffer>;

/**
 * The hash of one row: over the previous row's hash and the row's content,
 * JSON-encoded so no two different rows encode alike; HMAC-SHA256 under
 * `key`, or plain SHA-256 when `key` is null (legacy rows).
 * @returns 64 hex characters.
 */
export function chainDigest(key: Buffer | null, content: string): string {
  if (key === null) return sha256Hex(content);
  let mac = chainMacs.get(key);
  if (mac === undefined) {
    mac = new HmacSha256(key);
    chainMacs.set(key, mac);
  }
  return mac.hex(content);
}

/** The HMAC of each chain key in use, its pads computed once (hmac.ts: no Hmac object per row). */
const chainMacs = new WeakMap<Buffer, HmacSha256>();
