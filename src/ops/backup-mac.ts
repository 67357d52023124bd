import { createHmac, timingSafeEqual } from "node:crypto";
import { closeSync, existsSync, openSync, readFileSync, readSync, rmSync, writeSync } from "node:fs";
import type { ValueCipher } from "../crypto/cipher.js";

/**
 * Backup authentication (docs/operations.md, "Backups"): `backup FILE`
 * writes `FILE.mac` beside the copy, one line
 *
 *     ephemeral-vault-backup-mac v1 key=<root key id> bytes=<size> hmac=<64 hex>
 *
 * where hmac is HMAC-SHA256 over every byte of FILE under the backup MAC key
 * of that root key: HKDF-SHA256(root, empty salt, BACKUP_MAC_INFO), never
 * stored. Whoever can write the backup but has not the root key cannot make
 * a MAC that `restore` accepts; restore checks it over the very bytes it
 * copies into the data dir, before anything is replaced.
 */

/** The HKDF info label of the backup MAC key (its own, so no other MAC of the vault verifies as one). */
export const BACKUP_MAC_INFO = "ephemeral-vault/v1/backup-mac";

const HEADER = "ephemeral-vault-backup-mac v1";
const LINE = /^ephemeral-vault-backup-mac v1 key=([0-9a-f]{16}) bytes=(\d+) hmac=([0-9a-f]{64})\n?$/;

/** Bytes read per step while a backup is MACed or copied. */
const CHUNK = 1 << 20;

/** The MAC file of a backup: `FILE.mac`. */
export function macFileOf(file: string): string {
  return `${file}.mac`;
}

/**
 * Streams `file` through an HMAC-SHA256 under `key`, writing each chunk to
 * `copyTo` too when given (a file created with mode 0600, replaced if there).
 * @returns the MAC (32 bytes) and the number of bytes read.
 */
function macOfFile(file: string, key: Buffer, copyTo?: string): { mac: Buffer; bytes: number } {
  const hmac = createHmac("sha256", key);
  const buffer = Buffer.alloc(CHUNK);
  const input = openSync(file, "r");
  const output = copyTo === undefined ? undefined : openSync(copyTo, "w", 0o600);
  let bytes = 0;
  try {
    for (;;) {
      const n = readSync(input, buffer, 0, CHUNK, bytes);
      if (n === 0) break;
      hmac.update(buffer.subarray(0, n));
      if (output !== undefined) writeSync(output, buffer, 0, n);
      bytes += n;
    }
  } finally {
    closeSync(input);
    if (output !== undefined) closeSync(output);
  }
  return { mac: hmac.digest(), bytes };
}

/**
 * The MAC line of a backup file, under the current root key's backup MAC key.
 * @returns the line, ending in a newline, to write to `FILE.mac`.
 */
export function backupMacLine(file: string, cipher: ValueCipher): string {
  const key = cipher.derivedKeys(BACKUP_MAC_INFO).get(cipher.currentKeyId) as Buffer;
  const { mac, bytes } = macOfFile(file, key);
  return `${HEADER} key=${cipher.currentKeyId} bytes=${bytes} hmac=${mac.toString("hex")}\n`;
}

/** Why a backup is not authentic, for RestoreRefused. */
export class BackupNotAuthentic extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BackupNotAuthentic";
  }
}

/**
 * Copies `file` to `dest` byte for byte while checking its MAC file
 * (`FILE.mac`) under the backup MAC keys of the loaded root keys (current and
 * previous: a backup made before a rotation verifies with the old key listed).
 * On a mismatch `dest` is removed: what is checked is what was copied.
 * @returns "authenticated", or "unauthenticated" when there is no MAC file
 *   and `allowMissing` (backups made by builds that did not write one).
 * @throws BackupNotAuthentic when the MAC file is missing (and not allowed),
 *   malformed, names a root key that is not loaded, or does not match.
 */
export function copyAuthenticated(file: string, dest: string, cipher: ValueCipher, allowMissing: boolean): "authenticated" | "unauthenticated" {
  const macFile = macFileOf(file);
  if (!existsSync(macFile)) {
    if (!allowMissing) {
      throw new BackupNotAuthentic(
        `no MAC file ${macFile}: the backup is not authenticated (copy FILE.mac with the backup; for a backup made by an older ephemeral-vault, pass --unauthenticated)`,
      );
    }
    return "unauthenticated";
  }
  const match = LINE.exec(readFileSync(macFile, "utf8"));
  if (match === null) throw new BackupNotAuthentic(`${macFile} is not a backup MAC line`);
  const [, keyId, size, hex] = match as unknown as [string, string, string, string];
  const key = cipher.derivedKeys(BACKUP_MAC_INFO).get(keyId);
  if (key === undefined) {
    throw new BackupNotAuthentic(
      `the backup's MAC was made with root key ${keyId}, which is not loaded (set VAULT_ENCRYPTION_KEY, older ones in VAULT_PREVIOUS_ENCRYPTION_KEYS)`,
    );
  }
  const { mac, bytes } = macOfFile(file, key, dest);
  const expected = Buffer.from(hex, "hex");
  if (bytes !== Number(size) || !timingSafeEqual(mac, expected)) {
    rmSync(dest, { force: true });
    throw new BackupNotAuthentic("the backup's MAC does not match its bytes (the file was changed after it was written)");
  }
  return "authenticated";
}
