/**
 * The plaintext of a file envelope (docs/share.md, "Envelope version 3: a
 * file"): a fixed-size metadata block, then the file's bytes.
 *
 * - metadata block: exactly FILE_META_BYTES (1024) bytes, the UTF-8 compact
 *   JSON `{"name":"…","type":"…"}` padded with spaces (0x20) to 1024, so
 *   the ciphertext's length tells the file's size exactly and nothing of the
 *   name's length;
 * - then the file's bytes, as they are.
 *
 * The block is inside the ciphertext: the vault never sees the name or type.
 */

/** Bytes of the metadata block at the start of a file envelope's plaintext. */
export const FILE_META_BYTES = 1024;

/** Longest file name a file envelope carries, in UTF-8 bytes (the common file systems' 255). */
export const MAX_FILE_NAME_BYTES = 255;

/** The media type a file gets when none (or no valid one) is known. */
export const DEFAULT_FILE_TYPE = "application/octet-stream";

/** A file carried by an end-to-end link (docs/share.md, "Envelope version 3: a file"). */
export interface SharedFile {
  /** The file's name as the sender gave it (a base name); sanitize it before saving (safeFileName). */
  name: string;
  /** Its media type (RFC 6838 `type/subtype`), e.g. `application/pdf`. */
  type: string;
  /** The file's bytes. */
  bytes: Uint8Array;
}

/** A media type `type/subtype` (RFC 6838 section 4.2 restricted names), without parameters, at most 127 characters. */
const MEDIA_TYPE = /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,62}\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,62}$/;

/** Whether `type` is a media type a file envelope may carry (RFC 6838 section 4.2 names, no parameters). */
export function isMediaType(type: string): boolean {
  return MEDIA_TYPE.test(type);
}

/** C0 and C1 control characters and DEL, and the bidirectional controls that can disguise an extension (U+202A-U+202E, U+2066-U+2069). */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/**
 * A file name made safe to save (docs/share.md, "Envelope version 3: a
 * file"): the last path component only (after any `/` or `\`), no control
 * characters (C0, DEL, C1) nor bidirectional controls, no leading dots or
 * surrounding spaces, at most 255 UTF-8 bytes; `file` when nothing is left.
 * The page's Download and a client that saves under the sender's name use it.
 */
export function safeFileName(name: string): string {
  const base = name.split(/[/\\]/).pop() ?? "";
  let out = base.replace(UNSAFE, "").trim().replace(/^\.+/, "").trim();
  const enc = new TextEncoder();
  while (enc.encode(out).length > MAX_FILE_NAME_BYTES) out = Array.from(out).slice(0, -1).join("");
  return out === "" ? "file" : out;
}

/**
 * Encodes a file as a file envelope's plaintext: the metadata block, then the bytes.
 * @throws Error when the name is empty or over 255 UTF-8 bytes, the type is
 *   no media type, or the metadata does not fit its 1024 bytes (a name of
 *   many escaped control characters).
 */
export function encodeFilePayload(file: SharedFile): Uint8Array<ArrayBuffer> {
  const enc = new TextEncoder();
  const nameBytes = enc.encode(file.name).length;
  if (nameBytes === 0 || nameBytes > MAX_FILE_NAME_BYTES) throw new Error(`a file's name must be 1 to ${MAX_FILE_NAME_BYTES} bytes (UTF-8)`);
  if (!isMediaType(file.type)) throw new Error("a file's type must be a media type such as application/pdf");
  const meta = enc.encode(JSON.stringify({ name: file.name, type: file.type }));
  if (meta.length > FILE_META_BYTES) throw new Error(`a file's name and type must fit ${FILE_META_BYTES} bytes of JSON`);
  const out = new Uint8Array(FILE_META_BYTES + file.bytes.length);
  out.fill(0x20, 0, FILE_META_BYTES);
  out.set(meta);
  out.set(file.bytes, FILE_META_BYTES);
  return out;
}

/**
 * Decodes a file envelope's plaintext (encodeFilePayload's).
 * @returns the file; its bytes are a view of `plain` (no copy).
 * @throws Error when the block is shorter than 1024 bytes, is no JSON object
 *   of a string `name` (1 to 255 bytes) and a media type `type`.
 */
export function decodeFilePayload(plain: Uint8Array): SharedFile {
  if (plain.length < FILE_META_BYTES) throw new Error("the file's metadata is cut short");
  let meta: unknown;
  try {
    meta = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(plain.subarray(0, FILE_META_BYTES)));
  } catch {
    throw new Error("the file's metadata is not JSON");
  }
  const m = meta as { name?: unknown; type?: unknown } | null;
  if (m === null || typeof m !== "object" || typeof m.name !== "string" || typeof m.type !== "string") throw new Error("the file's metadata has no name and type");
  const nameBytes = new TextEncoder().encode(m.name).length;
  if (nameBytes === 0 || nameBytes > MAX_FILE_NAME_BYTES || !isMediaType(m.type)) throw new Error("the file's name or type is out of shape");
  return { name: m.name, type: m.type, bytes: plain.subarray(FILE_META_BYTES) };
}

/**
 * The file size an envelope of version 3 holds, from the length of its
 * `ct` (base64url without padding): the ciphertext's bytes less the 16-byte
 * tag and the 1024-byte metadata block. What the vault's size limit
 * (VAULT_MAX_FILE_BYTES) compares; a `ct` too short for a file gives 0.
 */
export function fileSizeOfCiphertext(ctBase64UrlLength: number): number {
  const ctBytes = Math.floor((ctBase64UrlLength * 3) / 4);
  return Math.max(0, ctBytes - 16 - FILE_META_BYTES);
}
