import type { ValueCipher } from "../../crypto/cipher.js";
import { verifyRootKeysWith } from "../root-keys.js";
import type { Work } from "../work.js";
import { PgExecutor } from "./executor.js";
import type { PgUnits } from "./batch/index.js";

/**
 * The root-key check (store/root-keys.ts) on PostgreSQL, in one unit of
 * work; the meta row's lock makes starting nodes take turns.
 * @throws (rejects) WrongKeyError naming what to set.
 */
export async function verifyPgRootKeys(tx: PgUnits<Work>, cipher: ValueCipher): Promise<void> {
  await tx.runOnClient((_w, client) => verifyRootKeysWith(new PgExecutor(client), cipher));
}
