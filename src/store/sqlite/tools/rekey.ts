import { openChain } from "../audit/chain.js";
import { CURRENT_ENVELOPE_VERSION } from "../../../crypto/cipher.js";
import type { ValueCipher } from "../../../crypto/cipher.js";
import { openDatabase, setMeta } from "../db.js";
import type { Db } from "../db.js";
import { verifyRootKeys } from "../root-keys.js";
import type { RekeyReport } from "../../tool-shapes.js";

/** Rows re-encrypted per transaction. */
export const REKEY_BATCH = 500;

interface StoredValue {
  id: number;
  scope: string;
  key: string;
  created_at: number;
  value_version: number;
  ciphertext: Buffer;
}

/**
 * Re-encrypts every stored secret value under the current root key and the
 * current envelope version (v3, which binds the row's creation time and
 * value version into the AAD), in transactions of `batch` rows, walking the
 * table by id; each rewritten row's value version moves by one in the
 * statement that writes its new ciphertext (schema.sql version 19), as a
 * replace's does. Then, when nothing remains under another key or in an
 * older envelope, the meta row `root_key_ids` is set to the current key
 * alone, so the server starts without the old keys, and
 * `min_envelope_version` to 3, so v1 and v2 envelopes (whose AAD binds
 * neither the value version nor, for v1, the creation time) no longer open
 * (verifyRootKeys; docs/operations.md, "Rotating the encryption key").
 *
 * Runs on a database no server has open (runRekey, cli/admin/rekey.ts,
 * takes the data-dir lock). A value that does not open is counted in `failed` and left alone.
 *
 * @throws WrongKeyError when records need a root key that is not loaded
 *   (the server's own start check, verifyRootKeys).
 */
export function rekeyDatabase(db: Db, cipher: ValueCipher, batch: number = REKEY_BATCH): RekeyReport {
  verifyRootKeys(db, cipher);
  const page = db.prepare<[number, number], StoredValue>(
    "SELECT id, scope, key, created_at, value_version, ciphertext FROM secrets WHERE id > ? AND ciphertext IS NOT NULL ORDER BY id LIMIT ?",
  );
  // The new ciphertext is encrypted for the next value version (ValueCipher.rewrap), written with it.
  const write = db.prepare<[Buffer, number, number]>(
    "UPDATE secrets SET ciphertext = ?, value_version = value_version + 1 WHERE id = ? AND value_version = ?",
  );
  const report: RekeyReport = { rewrapped: 0, alreadyCurrent: 0, failed: 0, remaining: 0 };
  let after = 0;
  const step = db.transaction((rows: StoredValue[]) => {
    for (const row of rows) {
      if (cipher.isCurrent(row.ciphertext)) {
        report.alreadyCurrent++;
        continue;
      }
      let next: Buffer;
      try {
        next = cipher.rewrap(row.ciphertext, { scope: row.scope, key: row.key, createdAt: row.created_at, valueVersion: row.value_version });
      } catch {
        report.failed++;
        continue;
      }
      write.run(next, row.id, row.value_version);
      report.rewrapped++;
    }
  });
  for (;;) {
    const rows = page.all(after, batch);
    if (rows.length === 0) break;
    step.immediate(rows);
    after = (rows[rows.length - 1] as StoredValue).id;
  }
  report.remaining = (
    db
      .prepare(
        "SELECT count(*) AS n FROM secrets WHERE ciphertext IS NOT NULL AND (substr(ciphertext, 1, 1) <> ? OR substr(ciphertext, 2, 8) <> ?)",
      )
      .get(Buffer.from([CURRENT_ENVELOPE_VERSION]), Buffer.from(cipher.currentKeyId, "hex")) as { n: number }
  ).n;
  if (report.remaining === 0) {
    setMeta(db, "root_key_ids", JSON.stringify([cipher.currentKeyId]));
    // Every value is v3 now: from the next start on, a v1 or v2 value pasted back does not open.
    setMeta(db, "min_envelope_version", String(CURRENT_ENVELOPE_VERSION));
    // The audit chain goes on under the new key: a new segment, its record signed with the new key.
    openChain(db, cipher.currentKeyId, cipher.auditChainKeys());
  }
  // The old ciphertexts: out of the WAL now (secure_delete clears the freed pages of the main file).
  db.pragma("wal_checkpoint(TRUNCATE)");
  return report;
}

/**
 * rekeyDatabase() on the database file `file` (opened as the server opens
 * it, so it is migrated first), closed afterwards.
 * @throws WrongKeyError as rekeyDatabase().
 */
export function rekeyFile(file: string, cipher: ValueCipher): RekeyReport {
  const db = openDatabase(file);
  try {
    return rekeyDatabase(db, cipher);
  } finally {
    db.close();
  }
}
