import { openChain } from "../store/sqlite/audit-chain.js";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { ConfigError } from "../config.js";
import { CURRENT_ENVELOPE_VERSION, ValueCipher } from "../crypto/cipher.js";
import { openDatabase, setMeta } from "../store/sqlite/db.js";
import type { Db } from "../store/sqlite/db.js";
import { WrongKeyError } from "../store/errors.js";
import { verifyRootKeys } from "../store/sqlite/root-keys.js";
import { dataDirOf, EXIT_FAILED, EXIT_OK, loadRootKeys, parseOpsArgs, processOutput } from "./common.js";
import { fileRootKey, replaceEncryptionKeyFile } from "./key-file-swap.js";
import type { OpsOutput } from "./common.js";
import { lockDataDir } from "./lock.js";

/** Rows re-encrypted per transaction. */
export const REKEY_BATCH = 500;

/** What rekeyDatabase() did. */
export interface RekeyReport {
  /** Values re-encrypted under the current key and envelope version. */
  rewrapped: number;
  /** Values that were already current. */
  alreadyCurrent: number;
  /** Values that did not open (damaged): left as they were. */
  failed: number;
  /** Values still under an old key or an old envelope version afterwards. */
  remaining: number;
}

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
 * Runs on a database no server has open (rekeyCommand takes the data-dir
 * lock). A value that does not open is counted in `failed` and left alone.
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
 * `ephemeral-vault rekey [--data-dir DIR]`: offline key rotation. With the
 * new root key in VAULT_ENCRYPTION_KEY (or --encryption-key, else the data
 * dir's encryption.key) and the old ones in VAULT_PREVIOUS_ENCRYPTION_KEYS,
 * takes the data-dir lock (refused while the vault runs) and re-encrypts
 * every stored value (rekeyDatabase).
 * @returns 0 when no value remains under an old key, 1 otherwise.
 * @throws ConfigError for usage errors, a bad or missing key, a running vault
 *   or records needing a key that is not loaded (exit 2).
 */
export async function rekeyCommand(
  argv: string[],
  env: Record<string, string | undefined> = process.env,
  output: OpsOutput = processOutput,
): Promise<number> {
  const { positionals, values } = parseOpsArgs(argv, ["data-dir", "encryption-key", "previous-encryption-keys"]);
  if (positionals.length !== 0) {
    throw new ConfigError("usage: ephemeral-vault rekey [--data-dir DIR] [--encryption-key KEY] [--previous-encryption-keys KEYS]");
  }
  const dataDir = dataDirOf(values, env);
  const file = join(dataDir, "vault.db");
  if (!existsSync(file)) throw new ConfigError(`no database at ${file}`);
  const keys = loadRootKeys(dataDir, values, env);
  const cipher = new ValueCipher(keys.root, keys.previous);
  // A generated encryption.key that is not the new key: replaced once the database is rekeyed.
  const inFile = fileRootKey(dataDir);
  const lock = lockDataDir(dataDir, "rekey");
  try {
    const db = openDatabase(file);
    let report: RekeyReport;
    try {
      report = rekeyDatabase(db, cipher);
    } catch (err) {
      if (err instanceof WrongKeyError) throw new ConfigError(err.message);
      throw err;
    } finally {
      db.close();
    }
    output.out(
      `rekey: ${report.rewrapped} values rewrapped under key ${cipher.currentKeyId}, ${report.alreadyCurrent} already current, ` +
        `${report.remaining} remaining under old keys` +
        (report.failed > 0 ? `, ${report.failed} did not open (damaged)` : "") +
        "\n",
    );
    if (inFile !== undefined && !inFile.equals(keys.root)) {
      const kept = replaceEncryptionKeyFile(dataDir, inFile, keys.root);
      output.out(
        `encryption.key now holds the new key, so a start without VAULT_ENCRYPTION_KEY opens the database; the old key is kept in ${kept} (mode 0600) for audit verify of older rows: remove it once you no longer need it\n`,
      );
    }
    if (report.remaining === 0) {
      output.out("every value is under the current key: VAULT_PREVIOUS_ENCRYPTION_KEYS can be dropped\n");
      return EXIT_OK;
    }
    return EXIT_FAILED;
  } finally {
    lock.release();
  }
}
