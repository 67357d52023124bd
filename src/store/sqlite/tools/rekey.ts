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
  ciphertext: Buffer;
}

/**
 * Re-encrypts every stored secret value under the current root key and the
 * current envelope version (which binds the row's creation time into the
 * AAD), in transactions of `batch` rows, walking the table by id. Then, when
 * nothing remains under another key, the meta row `root_key_ids` is set to
 * the current key alone, so the server starts without the old keys, and
 * `min_envelope_version` to 2, so v1 envelopes (whose AAD does not bind the
 * row's creation time) no longer open (verifyRootKeys).
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
    "SELECT id, scope, key, created_at, ciphertext FROM secrets WHERE id > ? AND ciphertext IS NOT NULL ORDER BY id LIMIT ?",
  );
  const write = db.prepare<[Buffer, number]>("UPDATE secrets SET ciphertext = ? WHERE id = ?");
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
        next = cipher.rewrap(row.ciphertext, { scope: row.scope, key: row.key, createdAt: row.created_at });
      } catch {
        report.failed++;
        continue;
      }
      write.run(next, row.id);
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
    // Every value is v2 now: from the next start on, a v1 value pasted back does not open.
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
