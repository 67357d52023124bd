/**
 * The additional authenticated data of a secret value: version, scope
 * ("global" or an org id) and key (or public id), NUL-separated.
 */
export function aadFor(scope: string, key: string): Buffer {
  return Buffer.from(`ephemeral-vault/v1\0${scope}\0${key}`, "utf8");
}

/** Where a secret value is stored: its scope, key and row creation time (Unix ms). */
export interface RecordPlace {
  scope: string;
  key: string;
  /** The row's created_at, Unix milliseconds. */
  createdAt: number;
}

/**
 * The v2 AAD of a secret value: scope, key and the row's creation time in
 * milliseconds, NUL-separated. A secret deleted and created again under the
 * same key gets a new creation time, so the older ciphertext copied into the
 * newer row fails authentication (no rollback to an older value).
 */
export function aadForRecord(place: RecordPlace): Buffer {
  return Buffer.from(`ephemeral-vault/v2\0${place.scope}\0${place.key}\0${place.createdAt}`, "utf8");
}
