import type { ValueCipher } from "../crypto/cipher.js";
import { WrongKeyError } from "../model/engine-errors.js";
import { drive } from "./sql/executor.js";
import type { SqlExecutor } from "./sql/executor.js";
import { Fragment, ordered, sql } from "./sql/template.js";
import type { Awaitable } from "../model/awaitable.js";

/** The meta row is locked, so starting nodes take turns (empty where one process writes). */
const FOR_UPDATE = new Fragment("", " FOR UPDATE");

/**
 * Refuses to serve with a wrong encryption key, on either engine
 * (docs/configuration.md, VAULT_ENCRYPTION_KEY and VAULT_PREVIOUS_ENCRYPTION_KEYS).
 *
 * The meta row `root_key_ids` lists the ids (crypto rootKeyId) of the root
 * keys that may have written records. At least one of them must be loaded
 * (current or previous) unless the list is empty (a new database); an
 * unloaded id is dropped only when no stored ciphertext still uses it. The
 * current key is then added. So a wrong key never starts, and a rotation
 * (new current key, old one in VAULT_PREVIOUS_ENCRYPTION_KEYS) does. When
 * the meta row `min_envelope_version` is set (by `rekey`, once every value
 * is an envelope of that version: 2 by a build before value versions, 3
 * since), the cipher refuses older envelopes from then on
 * (ValueCipher.refuseEnvelopesBelow; docs/operations.md, "Encryption at rest").
 *
 * Run it inside one transaction on `x`; synchronous on an executor that
 * answers synchronously.
 * @throws WrongKeyError with a message naming what to set.
 * @throws RangeError when `min_envelope_version` names no envelope version
 *   this build knows.
 */
export function verifyRootKeysWith(x: SqlExecutor, cipher: ValueCipher): Awaitable<void> {
  return drive(rootKeysRule(x, cipher));
}

function* rootKeysRule(x: SqlExecutor, cipher: ValueCipher): Generator<Awaitable<unknown>, void, unknown> {
  yield x.run(sql`INSERT INTO meta (name, value) VALUES ('root_key_ids', '[]') ON CONFLICT (name) DO NOTHING`);
  const row = (yield x.get(ordered`SELECT value FROM meta WHERE name = 'root_key_ids'${FOR_UPDATE}`)) as { value: string } | undefined;
  const listed = JSON.parse(row?.value ?? "[]") as string[];
  if (listed.length > 0 && !listed.some((id) => cipher.hasKey(id))) {
    throw new WrongKeyError(
      "VAULT_ENCRYPTION_KEY does not match the key this database was written with; set the original key (after a rotation, list the old one in VAULT_PREVIOUS_ENCRYPTION_KEYS)",
    );
  }
  const keep: string[] = [];
  for (const id of listed) {
    if (cipher.hasKey(id)) {
      keep.push(id);
      continue;
    }
    const used = yield x.get(
      sql`SELECT 1 AS one FROM secrets WHERE ciphertext IS NOT NULL AND substr(ciphertext, 2, 8) = ${Buffer.from(id, "hex")} LIMIT 1`,
    );
    if (used !== undefined) {
      throw new WrongKeyError(`records written with root key ${id} remain, but that key is not loaded; add it to VAULT_PREVIOUS_ENCRYPTION_KEYS`);
    }
  }
  if (!keep.includes(cipher.currentKeyId)) keep.push(cipher.currentKeyId);
  yield x.run(sql`UPDATE meta SET value = ${JSON.stringify(keep)} WHERE name = 'root_key_ids'`);
  const min = (yield x.get(sql`SELECT value FROM meta WHERE name = 'min_envelope_version'`)) as { value: string } | undefined;
  // The version `rekey` upgraded every value to: older envelopes no longer open.
  if (min !== undefined) cipher.refuseEnvelopesBelow(Number(min.value));
}
