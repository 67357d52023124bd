import { fromBase64Url, hkdfBytes, linkKeyBytes, subtle, toBase64Url, utf8 } from "./envelope.js";
import type { Bytes } from "./envelope.js";
import { isMediaType, MAX_FILE_NAME_BYTES } from "./file-payload.js";

/**
 * A file link's metadata shown before the reveal (docs/share.md, "Files"):
 * the create's `file_meta`, opaque to the vault.
 *
 * - plaintext: the UTF-8 JSON `{"name":…,"type":…,"size":<bytes>}`;
 * - key: HKDF-SHA256(ikm = the 32-byte link key, salt = empty,
 *   info = "ephemeral-vault file meta v1"), 32 bytes (RFC 5869);
 * - AES-256-GCM under a random 12-byte nonce, AAD "ephemeral-vault file meta v1";
 * - the field: base64url without padding of nonce || ciphertext || tag.
 *
 * Never made for a link with a passphrase: the name may be what the passphrase protects.
 */

/** The HKDF info and the AES-GCM AAD of a file meta. */
const LABEL = utf8("ephemeral-vault file meta v1");

/** Longest `file_meta` the vault stores, in characters (base64url). */
export const MAX_FILE_META_CHARS = 1400;

/**
 * The plaintext is padded with spaces to this many bytes (docs/share.md, "The
 * file's metadata before the reveal"), so every field is 1,371 characters
 * whatever the name: 12 + 1,000 + 16 bytes in base64url.
 */
export const FILE_META_PLAINTEXT_BYTES = 1000;

/** What a file link's `file_meta` tells before the reveal. */
export interface FileMeta {
  /** The file's name as the sender gave it; sanitize it for display or saving (safeFileName). */
  name: string;
  /** Its media type, e.g. `application/pdf`. */
  type: string;
  /** Its size in bytes. */
  size: number;
}

async function metaKey(linkKey: string, usage: "encrypt" | "decrypt"): Promise<CryptoKey> {
  const raw = await hkdfBytes(linkKeyBytes(linkKey), new Uint8Array(0), LABEL, 32);
  return subtle().importKey("raw", raw, "AES-GCM", false, [usage]);
}

/**
 * Encrypts a file's name, type and size under the link key (the format above).
 * @param linkKey the link's key, 43 base64url characters.
 * @param options.nonce test seam: a fixed 12-byte nonce (the published vector).
 * @returns the `file_meta` field, base64url of nonce || ciphertext || tag.
 * @throws EnvelopeError "key" for a link key of the wrong shape; Error when
 *   the field would exceed 1,400 characters (a name near 255 bytes of
 *   many escaped characters).
 */
export async function sealFileMeta(linkKey: string, meta: FileMeta, options: { nonce?: Bytes } = {}): Promise<string> {
  const nonce = options.nonce ?? globalThis.crypto.getRandomValues(new Uint8Array(12));
  // Padded with spaces (JSON allows them) to FILE_META_PLAINTEXT_BYTES: the field's length tells nothing of the name's.
  const json = JSON.stringify({ name: meta.name, type: meta.type, size: meta.size });
  const plain = utf8(json.padEnd(json.length + Math.max(0, FILE_META_PLAINTEXT_BYTES - utf8(json).length), " "));
  const ct = new Uint8Array(await subtle().encrypt({ name: "AES-GCM", iv: nonce, additionalData: LABEL }, await metaKey(linkKey, "encrypt"), plain));
  const out = new Uint8Array(nonce.length + ct.length);
  out.set(nonce);
  out.set(ct, nonce.length);
  const field = toBase64Url(out);
  if (field.length > MAX_FILE_META_CHARS) throw new Error(`a file's metadata must fit ${MAX_FILE_META_CHARS} characters`);
  return field;
}

/**
 * Decrypts a `file_meta` field (sealFileMeta's) with the link key.
 * @returns the name, type and size, or undefined when it does not decrypt
 *   under this key or is out of shape (the page then shows what it showed
 *   without one). Never throws.
 */
export async function openFileMeta(field: string, linkKey: string): Promise<FileMeta | undefined> {
  try {
    const bytes = fromBase64Url(field);
    if (bytes.length < 12 + 16) return undefined;
    const plain = await subtle().decrypt({ name: "AES-GCM", iv: bytes.subarray(0, 12), additionalData: LABEL }, await metaKey(linkKey, "decrypt"), bytes.subarray(12));
    const m = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(plain)) as { name?: unknown; type?: unknown; size?: unknown } | null;
    if (m === null || typeof m !== "object" || typeof m.name !== "string" || typeof m.type !== "string" || typeof m.size !== "number") return undefined;
    const nameBytes = new TextEncoder().encode(m.name).length;
    if (nameBytes === 0 || nameBytes > MAX_FILE_NAME_BYTES || !isMediaType(m.type) || !Number.isSafeInteger(m.size) || m.size < 0) return undefined;
    return { name: m.name, type: m.type, size: m.size };
  } catch {
    return undefined;
  }
}
