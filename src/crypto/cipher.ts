import { createCipheriv, createDecipheriv, hkdfSync } from "node:crypto";
import { randomBytesPooled } from "./random.js";
import { RECORD_KEY_INFO as HKDF_INFO, hkdfSha256Block } from "./hkdf.js";
import { KEY_ID_BYTES, rootKeyId } from "./root-key.js";
import { aadFor, aadForRecord, aadForValue } from "./aad.js";
import type { RecordPlace } from "./aad.js";

// Re-exported: the root key helpers live in root-key.ts, the AAD in aad.ts, the HKDF in hkdf.ts.
export { generateRootKey, parseRootKey, rootKeyId } from "./root-key.js";
export { aadFor, aadForRecord, aadForValue } from "./aad.js";
export { hkdfSha256Block } from "./hkdf.js";
export type { RecordPlace } from "./aad.js";

/**
 * Envelope format versions, the first byte of every stored ciphertext. v1:
 * the AAD binds scope and key (aadFor). v2: it also binds the row's creation
 * time (aadForRecord), so an older ciphertext of the same key does not open
 * in a newer row. v3: it also binds the row's value version (aadForValue),
 * so an older value of the same row does not open in it after a replace
 * (docs/operations.md, "Encryption at rest").
 */
const ENVELOPE_V1 = 1;
const ENVELOPE_V2 = 2;
const ENVELOPE_V3 = 3;
/** The envelope version new records are written with. */
export const CURRENT_ENVELOPE_VERSION = ENVELOPE_V3;
/**
 * The value version of a row not written since value versions began
 * (schema.sql version 19, schema-pg.sql version 9): the only one a v1 or v2
 * envelope opens in.
 */
export const UNVERSIONED_VALUE = 0;
const SALT_BYTES = 16;
const NONCE_BYTES = 12; // 96-bit GCM nonce (NIST SP 800-38D recommends 96 bits)
const TAG_BYTES = 16;
const HEADER_BYTES = 1 + KEY_ID_BYTES + SALT_BYTES + NONCE_BYTES + TAG_BYTES;
/** A record key's length (AES-256). */
const RECORD_KEY_BYTES = 32;
/** Where an envelope's key id and salt (what names its record key) end. */
const RECORD_KEY_END = 1 + KEY_ID_BYTES + SALT_BYTES;
/**
 * Derived record keys kept in memory by default (about 140 bytes each:
 * docs/configuration.md, VAULT_RECORD_KEY_CACHE).
 */
export const RECORD_KEY_CACHE = 16_384;

/** Thrown when a ciphertext cannot be opened: wrong key, moved row, or damage. */
export class DecryptError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DecryptError";
  }
}

/**
 * AES-256-GCM envelope encryption of secret values (docs/contract.md §7).
 *
 * Each write draws a fresh 16-byte salt and 96-bit nonce; the record key is
 * HKDF-SHA256(root, salt, "ephemeral-vault/v1/record-key") (RFC 5869), so no
 * two records share a key and a nonce can never repeat under one key. The
 * additional authenticated data binds the ciphertext to its row (scope, key,
 * creation time) and to the write of the row's value (its value version): a
 * ciphertext copied to another row, or an older value put back into its
 * row, fails authentication.
 *
 * Envelope: version(1) | root key id(8) | salt(16) | nonce(12) | tag(16) | ciphertext.
 */
export class ValueCipher {
  private readonly keys = new Map<string, Buffer>();
  /**
   * Derived record keys of recently written or read records: the slot of
   * each cached name. Slot i's key is bytes 32i..32i+31 of recordKeySlab
   * (one allocation, not a Buffer per key: docs/configuration.md,
   * VAULT_RECORD_KEY_CACHE).
   * HKDF is the largest single cost of a read; caching its output exposes
   * nothing the root key in the same memory does not already.
   */
  private readonly recordKeys = new Map<string, number>();
  private readonly recordKeySlab: Buffer;
  /**
   * The cached names by slot, a ring of the cache's size: the slot of the
   * next insert holds the oldest name, dropped in O(1), where a Map's own
   * first key is found by skipping its deleted entries (docs/performance.md,
   * "Reads at scale").
   */
  private readonly recordKeyRing: (string | undefined)[];
  private recordKeyNext = 0;
  /** The loaded root keys by their id's 8 bytes as a latin1 string (an envelope's key id as it stands). */
  private readonly keysByLatin1 = new Map<string, Buffer>();
  /** Id of the key new records are written with. */
  readonly currentKeyId: string;
  /** The same id's 8 bytes as a latin1 string (the record key cache's names). */
  private readonly currentKeyIdLatin1: string;
  /**
   * The oldest envelope version that opens as a record: 1 until `rekey`
   * has upgraded every stored value and recorded the version it upgraded
   * to (meta `min_envelope_version`, store/root-keys.ts).
   */
  private minEnvelope = ENVELOPE_V1;

  /**
   * @param current the root key for new writes (32 bytes).
   * @param previous older root keys, only for reading older records.
   * @param options.recordKeyCache derived record keys kept in memory at most
   *   (VAULT_RECORD_KEY_CACHE, docs/configuration.md); 0 keeps none.
   */
  constructor(current: Buffer, previous: Buffer[] = [], options: { recordKeyCache?: number } = {}) {
    this.currentKeyId = rootKeyId(current);
    this.currentKeyIdLatin1 = Buffer.from(this.currentKeyId, "hex").toString("latin1");
    this.keys.set(this.currentKeyId, current);
    for (const key of previous) {
      const id = rootKeyId(key);
      if (!this.keys.has(id)) this.keys.set(id, key);
    }
    for (const [id, key] of this.keys) this.keysByLatin1.set(Buffer.from(id, "hex").toString("latin1"), key);
    const size = Math.max(0, Math.floor(options.recordKeyCache ?? RECORD_KEY_CACHE));
    this.recordKeyRing = new Array<string | undefined>(size);
    this.recordKeySlab = Buffer.alloc(size * RECORD_KEY_BYTES);
  }

  /** How many derived record keys are cached now (never above the cache's size). */
  get cachedRecordKeys(): number {
    return this.recordKeys.size;
  }

  /**
   * The audit chain key of every loaded root key, by root key id:
   * HKDF-SHA256(root, empty salt, "ephemeral-vault/v1/audit-chain"), 32
   * bytes (RFC 5869). Never stored (model/audit/chain.ts).
   */
  auditChainKeys(): Map<string, Buffer> {
    return this.derivedKeys("ephemeral-vault/v1/audit-chain");
  }

  /**
   * A 32-byte key per loaded root key, by root key id, for one purpose:
   * HKDF-SHA256(root, empty salt, info) (RFC 5869). Each purpose has its own
   * info label (the audit chain, backup MACs, audit anchors: docs/audit.md,
   * docs/operations.md), so a MAC made for one never verifies as another.
   * Never stored.
   */
  derivedKeys(info: string): Map<string, Buffer> {
    const out = new Map<string, Buffer>();
    for (const [id, root] of this.keys) out.set(id, Buffer.from(hkdfSync("sha256", root, Buffer.alloc(0), info, 32)));
    return out;
  }

  /** True when a root key with this id is loaded (current or previous). */
  hasKey(id: string): boolean {
    return this.keys.has(id);
  }

  /**
   * Encrypts a secret's value for its row: a v3 envelope whose AAD binds
   * scope, key, the row's creation time and the value version the row will
   * hold with this ciphertext (aadForValue): the store writes both in one
   * statement (store/sql/secrets.ts secretReplace, the engines' inserts).
   * @returns the envelope bytes to store.
   */
  encryptRecord(plaintext: string, place: RecordPlace): Buffer {
    return this.encryptAs(ENVELOPE_V3, plaintext, aadForValue(place));
  }

  /**
   * Opens a stored secret value by the envelope's version byte: v3 (scope,
   * key, creation time and value version), else v2 (scope, key and creation
   * time) or v1 (scope and key), which open only in a row at value version
   * 0 (UNVERSIONED_VALUE: not written since value versions began) and only
   * while the cipher takes their version (refuseEnvelopesBelow).
   * @throws DecryptError when the key is unknown, the ciphertext belongs to
   *   another row, an older secret of the same key or an older value of the
   *   same row, is of a refused version, or was altered.
   */
  decryptRecord(envelope: Buffer, place: RecordPlace): string {
    const version = envelope[0] as number;
    // Each version's AAD names the version, so a changed version byte fails authentication.
    if (version === ENVELOPE_V3) return this.open(envelope, ENVELOPE_V3, aadForValue(place));
    if (version !== ENVELOPE_V2 && version !== ENVELOPE_V1) throw new DecryptError("unknown ciphertext format");
    if (version < this.minEnvelope) {
      throw new DecryptError(`a v${version} envelope in a database whose values were all upgraded to v${this.minEnvelope}`);
    }
    if (place.valueVersion !== UNVERSIONED_VALUE) {
      // Its AAD cannot tell the row's values apart, and the row was rewritten since: an older value pasted back.
      throw new DecryptError(`a v${version} envelope in a row whose value was written since value versions began`);
    }
    if (version === ENVELOPE_V2) return this.open(envelope, ENVELOPE_V2, aadForRecord(place));
    return this.open(envelope, ENVELOPE_V1, aadFor(place.scope, place.key));
  }

  /**
   * Refuses envelopes older than `version` from now on (decryptRecord
   * throws DecryptError): once `rekey` has upgraded every value to
   * `version`, an older envelope's AAD binds less than the row's place (v1:
   * not the creation time; v2: not the value version), so an older value
   * pasted back into a row at value version 0 must not open either. Set
   * from meta `min_envelope_version` at start (store/root-keys.ts).
   * @param version an envelope version, 1 to CURRENT_ENVELOPE_VERSION.
   * @throws RangeError for another number.
   */
  refuseEnvelopesBelow(version: number): void {
    if (!Number.isInteger(version) || version < ENVELOPE_V1 || version > CURRENT_ENVELOPE_VERSION) {
      throw new RangeError(`no envelope version ${version}`);
    }
    this.minEnvelope = version;
  }

  /**
   * True when a stored envelope is already in the current format under the
   * current root key, so `rekey` leaves it alone.
   */
  isCurrent(envelope: Buffer): boolean {
    return envelope[0] === CURRENT_ENVELOPE_VERSION && envelopeKeyId(envelope) === this.currentKeyId;
  }

  /**
   * Re-encrypts a stored value under the current root key and the current
   * envelope version (used by `rekey`), for the row's next value version
   * (`place.valueVersion + 1`), which the caller writes with it in one
   * statement: the ciphertext it replaces no longer opens in the row.
   * @throws DecryptError when the envelope does not open for this place.
   */
  rewrap(envelope: Buffer, place: RecordPlace): Buffer {
    return this.encryptRecord(this.decryptRecord(envelope, place), { scope: place.scope, key: place.key, createdAt: place.createdAt, valueVersion: place.valueVersion + 1 });
  }

  /**
   * Encrypts a UTF-8 string into a v1 envelope with a caller-made AAD
   * (aadFor). Secret values use encryptRecord().
   * @returns the envelope bytes.
   */
  encrypt(plaintext: string, aad: Buffer): Buffer {
    return this.encryptAs(ENVELOPE_V1, plaintext, aad);
  }

  private encryptAs(version: number, plaintext: string, aad: Buffer): Buffer {
    const root = this.keys.get(this.currentKeyId) as Buffer;
    const salt = randomBytesPooled(SALT_BYTES);
    const nonce = randomBytesPooled(NONCE_BYTES);
    const key = hkdfSha256Block(root, salt, HKDF_INFO);
    this.cacheRecordKey(this.currentKeyIdLatin1 + salt.toString("latin1"), key);
    const cipher = createCipheriv("aes-256-gcm", key, nonce);
    cipher.setAAD(aad);
    const body = cipher.update(plaintext, "utf8");
    const rest = cipher.final(); // GCM is a stream mode: empty, kept for any bytes it may hold
    const tag = cipher.getAuthTag();
    // The envelope in one allocation: version | key id | salt | nonce | tag | ciphertext.
    const out = Buffer.allocUnsafe(HEADER_BYTES + body.length + rest.length);
    out[0] = version;
    let at = 1;
    at += out.write(this.currentKeyIdLatin1, at, "latin1");
    at += salt.copy(out, at);
    at += nonce.copy(out, at);
    at += tag.copy(out, at);
    at += body.copy(out, at);
    rest.copy(out, at);
    return out;
  }

  /**
   * Opens a v1 envelope made by encrypt().
   * @throws DecryptError when the key is unknown, the AAD differs (the
   *   ciphertext belongs to another secret) or the bytes were altered.
   */
  decrypt(envelope: Buffer, aad: Buffer): string {
    return this.open(envelope, ENVELOPE_V1, aad);
  }

  private open(envelope: Buffer, version: number, aad: Buffer): string {
    if (envelope.length < HEADER_BYTES || envelope[0] !== version) {
      throw new DecryptError("unknown ciphertext format");
    }
    const key = this.recordKeyOf(envelope);
    let at = RECORD_KEY_END;
    const nonce = envelope.subarray(at, (at += NONCE_BYTES));
    const tag = envelope.subarray(at, (at += TAG_BYTES));
    const body = envelope.subarray(at);
    try {
      const decipher = createDecipheriv("aes-256-gcm", key, nonce);
      decipher.setAAD(aad);
      decipher.setAuthTag(tag);
      // GCM is a stream mode: update() returns the whole plaintext and final() (which checks the tag) nothing,
      // so one Buffer is decoded; no StringDecoder, no Buffer.concat.
      const plain = decipher.update(body);
      const rest = decipher.final();
      return rest.length === 0 ? plain.toString("utf8") : Buffer.concat([plain, rest]).toString("utf8");
    } catch {
      throw new DecryptError("ciphertext failed authentication");
    }
  }

  /**
   * The record key of an envelope, HKDF-SHA256(root, salt, info), from the
   * cache when this record was written or read lately: the cache is named by
   * the envelope's key id and salt bytes as they stand (one latin1 string,
   * no hex or base64 encoding on the hot read).
   * @throws DecryptError when the envelope's root key is not loaded.
   */
  private recordKeyOf(envelope: Buffer): Buffer {
    const name = envelope.toString("latin1", 1, RECORD_KEY_END);
    const slot = this.recordKeys.get(name);
    // A view of the slot, used at once (createDecipheriv copies the key) before any insert can reuse it.
    if (slot !== undefined) return this.recordKeySlab.subarray(slot * RECORD_KEY_BYTES, (slot + 1) * RECORD_KEY_BYTES);
    const root = this.keysByLatin1.get(name.slice(0, KEY_ID_BYTES));
    if (root === undefined) throw new DecryptError(`no root key with id ${envelope.toString("hex", 1, 1 + KEY_ID_BYTES)} is loaded`);
    const key = hkdfSha256Block(root, envelope.subarray(1 + KEY_ID_BYTES, RECORD_KEY_END), HKDF_INFO);
    this.cacheRecordKey(name, key);
    return key;
  }

  /**
   * Keeps a derived record key, dropping the oldest entry once the cache
   * holds its size (first in, first out: a hit costs one Map lookup and no
   * reordering; a key dropped while still in use is derived again once).
   * A name already cached is left in its slot.
   */
  private cacheRecordKey(name: string, key: Buffer): void {
    const ring = this.recordKeyRing;
    if (ring.length === 0 || this.recordKeys.has(name)) return;
    const slot = this.recordKeyNext;
    const oldest = ring[slot];
    if (oldest !== undefined) this.recordKeys.delete(oldest);
    ring[slot] = name;
    key.copy(this.recordKeySlab, slot * RECORD_KEY_BYTES);
    this.recordKeys.set(name, slot);
    this.recordKeyNext = (slot + 1) % ring.length;
  }
}

/** Reads the root key id out of an envelope without decrypting it. */
export function envelopeKeyId(envelope: Buffer): string {
  return envelope.subarray(1, 1 + KEY_ID_BYTES).toString("hex");
}
