import { hkdfSync, randomBytes } from "node:crypto";

/** Bytes of a root key id (cipher.ts stores it in every envelope, after the version byte). */
export const KEY_ID_BYTES = 8;

/**
 * Parses a 256-bit root key written as 64 hex characters or as base64 /
 * base64url of exactly 32 bytes (docs/contract.md §3).
 * @returns the 32 bytes, or undefined when the text is neither.
 */
export function parseRootKey(text: string): Buffer | undefined {
  const s = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(s)) return Buffer.from(s, "hex");
  if (/^[A-Za-z0-9+/_-]{43}={0,1}$/.test(s)) {
    const bytes = Buffer.from(s.replace(/-/g, "+").replace(/_/g, "/"), "base64");
    if (bytes.length === 32) return bytes;
  }
  return undefined;
}

/** A fresh 256-bit root key (32 random bytes). */
export function generateRootKey(): Buffer {
  return randomBytes(32);
}

/**
 * The public fingerprint of a root key: 8 bytes of HKDF-SHA256(root, info
 * "key-id"), as 16 hex characters. Stored beside each ciphertext so the right
 * key decrypts it after a rotation; reveals nothing of the key.
 */
export function rootKeyId(root: Buffer): string {
  return Buffer.from(hkdfSync("sha256", root, Buffer.alloc(0), "ephemeral-vault/v1/key-id", KEY_ID_BYTES)).toString("hex");
}
