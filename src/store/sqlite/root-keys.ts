import type { ValueCipher } from "../../crypto/cipher.js";
import { verifyRootKeysWith } from "../root-keys.js";
import type { Db } from "./db.js";
import { SqliteExecutor } from "./executor.js";

/**
 * The root-key check (store/root-keys.ts) on an open SQLite database, in
 * one transaction, synchronously: at start, and in `rekey` and `restore`.
 * @throws WrongKeyError naming what to set.
 */
export function verifyRootKeys(db: Db, cipher: ValueCipher): void {
  const x = new SqliteExecutor(db);
  db.transaction(() => verifyRootKeysWith(x, cipher))();
}
