import type { ValueCipher } from "../../crypto/cipher.js";
import { WrongKeyError } from "../../crypto/keyfiles.js";
import type { Db } from "./db.js";
import { getMeta, setMeta } from "./db.js";

/**
 * Refuses to serve with a wrong encryption key (docs/operations.md, "Rotating the
 * encryption key"): the SQLite engine's start check; store/pg/root-keys.ts is its
 * PostgreSQL counterpart.
 *
 * The meta row `root_key_ids` lists the ids (crypto.rootKeyId) of the root
 * keys that may have written records. At start at least one of them must be
 * loaded (current or previous) unless the list is empty (a new database); an
 * unloaded id is dropped only when no stored ciphertext still uses it. The
 * current key is then added. So a wrong key never starts, and a rotation
 * (new current key, old one in VAULT_PREVIOUS_ENCRYPTION_KEYS) does.
 * When the meta row `min_envelope_version` is 2 (set by `rekey` once every
 * value is a v2 envelope), the cipher refuses v1 envelopes from then on.
 *
 * @throws WrongKeyError with a message naming what to set.
 */
export function verifyRootKeys(db: Db, cipher: ValueCipher): void {
  const listed = JSON.parse(getMeta(db, "root_key_ids") ?? "[]") as string[];
  if (listed.length > 0 && !listed.some((id) => cipher.hasKey(id))) {
    throw new WrongKeyError(
      "VAULT_ENCRYPTION_KEY does not match the key this database was written with; set the original key (after a rotation, list the old one in VAULT_PREVIOUS_ENCRYPTION_KEYS)",
    );
  }
  const inUse = db.prepare("SELECT 1 FROM secrets WHERE ciphertext IS NOT NULL AND substr(ciphertext, 2, 8) = ? LIMIT 1");
  const keep: string[] = [];
  for (const id of listed) {
    if (cipher.hasKey(id)) keep.push(id);
    else if (inUse.get(Buffer.from(id, "hex"))) {
      throw new WrongKeyError(
        `records written with root key ${id} remain, but that key is not loaded; add it to VAULT_PREVIOUS_ENCRYPTION_KEYS`,
      );
    }
  }
  if (!keep.includes(cipher.currentKeyId)) keep.push(cipher.currentKeyId);
  setMeta(db, "root_key_ids", JSON.stringify(keep));
  if (getMeta(db, "min_envelope_version") === "2") cipher.refuseLegacyEnvelopes();
}

