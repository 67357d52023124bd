/**
 * The additional authenticated data of a secret value: version, scope
 * ("global" or an org id) and key (or public id), NUL-separated.
 */
export function aadFor(scope: string, key: string): Buffer {
  return Buffer.from(`ephemeral-vault/v1\0${scope}\0${key}`, "utf8");
}

/**
 * Where a secret value is stored: its scope, key, row creation time (Unix
 * ms) and the row's value version (schema.sql version 19: 1 for a new
 * secret, one more at every write of a new ciphertext; 0 for a row not
 * written since that version).
 */
export interface RecordPlace {
  scope: string;
  key: string;
  /** The row's created_at, Unix milliseconds. */
  createdAt: number;
  /** The row's value_version: the write of its value this ciphertext belongs to. */
  valueVersion: number;
}

/**
 * The v2 AAD of a secret value: scope, key and the row's creation time in
 * milliseconds, NUL-separated. A secret deleted and created again under the
 * same key gets a new creation time, so the older ciphertext copied into the
 * newer row fails authentication. A replace (PUT) keeps the creation time,
 * so v2 does not tell a row's values apart: v3 (aadForValue) does.
 */
export function aadForRecord(place: Omit<RecordPlace, "valueVersion">): Buffer {
  return Buffer.from(`ephemeral-vault/v2\0${place.scope}\0${place.key}\0${place.createdAt}`, "utf8");
}

/**
 * The v3 AAD of a secret value: scope, key, the row's creation time in
 * milliseconds and the row's value version, NUL-separated
 * (docs/operations.md, "Encryption at rest"). A replace keeps the row and its
 * creation time but moves the value version, so the row's older ciphertext
 * pasted back fails authentication (no rollback to an older value of the
 * same row).
 */
export function aadForValue(place: RecordPlace): Buffer {
  return Buffer.from(`ephemeral-vault/v3\0${place.scope}\0${place.key}\0${place.createdAt}\0${place.valueVersion}`, "utf8");
}
