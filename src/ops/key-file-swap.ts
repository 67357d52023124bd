import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { parseRootKey, rootKeyId } from "../crypto/cipher.js";
import { randomBytes } from "node:crypto";

/** The generated root key file of a data dir (docs/configuration.md, VAULT_ENCRYPTION_KEY). */
export const ENCRYPTION_KEY_FILE = "encryption.key";

/**
 * The root key in the data dir's encryption.key, or undefined when there is
 * no such file or it does not hold a key (the start reports that).
 */
export function fileRootKey(dataDir: string): Buffer | undefined {
  const file = join(dataDir, ENCRYPTION_KEY_FILE);
  if (!existsSync(file)) return undefined;
  try {
    return parseRootKey(readFileSync(file, "utf8"));
  } catch {
    return undefined;
  }
}

/**
 * After a rekey to `next`: puts `next` into the data dir's encryption.key, so
 * that a plain start (no VAULT_ENCRYPTION_KEY) opens the rekeyed database
 * (docs/operations.md "Rotating the encryption key"). First the key being
 * replaced is written to `encryption.key.old-<its key id>` (mode 0600,
 * fsynced; a file of that name is never overwritten), then the new key to a
 * temporary file (0600, fsynced) renamed over encryption.key, then the
 * directory is fsynced: a crash leaves the old file or the new one, never a
 * torn one, and the old key is on disk before it stops being the current one.
 * @param previous the key encryption.key holds now (32 bytes).
 * @param next the new root key (32 bytes), written as 64 hex characters.
 * @returns the path of the kept old key.
 * @throws the file system's error (the database is already rekeyed: the
 *   operator then sets VAULT_ENCRYPTION_KEY or edits the file by hand).
 */
export function replaceEncryptionKeyFile(dataDir: string, previous: Buffer, next: Buffer): string {
  const file = join(dataDir, ENCRYPTION_KEY_FILE);
  const kept = join(dataDir, `${ENCRYPTION_KEY_FILE}.old-${rootKeyId(previous)}`);
  if (!existsSync(kept)) writeDurably(kept, `${previous.toString("hex")}\n`, "wx");
  const temp = join(dataDir, `${ENCRYPTION_KEY_FILE}.tmp-${randomBytes(6).toString("hex")}`);
  try {
    writeDurably(temp, `${next.toString("hex")}\n`, "wx");
    renameSync(temp, file);
  } catch (err) {
    rmSync(temp, { force: true });
    throw err;
  }
  syncDir(dataDir);
  return kept;
}

/** Writes `text` to a new file with mode 0600 and fsyncs it before closing. */
function writeDurably(path: string, text: string, flag: "wx"): void {
  const fd = openSync(path, flag, 0o600);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** fsync of a directory, so a rename in it is durable (a no-op where directories cannot be opened). */
function syncDir(dir: string): void {
  let fd: number;
  try {
    fd = openSync(dir, "r");
  } catch {
    return;
  }
  try {
    fsyncSync(fd);
  } catch {
    // Some file systems refuse fsync on a directory; the rename still happened.
  } finally {
    closeSync(fd);
  }
}
