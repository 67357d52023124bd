import type { ValueCipher } from "../../crypto/cipher.js";
import { WrongKeyError } from "../../crypto/keyfiles.js";
import type { Work } from "../work.js";
import type { PgUnits } from "./unit-of-work.js";

/**
 * The PostgreSQL counterpart of store/sqlite/root-keys.ts verifyRootKeys (docs/contract.md
 * §3), in one unit of work: at least one root key listed in the meta
 * row `root_key_ids` must be loaded (unless the list is empty: a new
 * database); an unloaded id is dropped only when no stored ciphertext uses
 * it; the current key is then added. So a node started with another
 * encryption key than the database was written with refuses to start.
 * @throws WrongKeyError naming what to set.
 */
export async function verifyPgRootKeys(tx: PgUnits<Work>, cipher: ValueCipher): Promise<void> {
  const refuseLegacy = await tx.runOnClient(async (w, client) => {
    // One node at a time: the row lock on meta serializes starting nodes.
    await client.query("INSERT INTO meta (name, value) VALUES ('root_key_ids', '[]') ON CONFLICT (name) DO NOTHING");
    const r = await client.query<{ value: string }>("SELECT value FROM meta WHERE name = 'root_key_ids' FOR UPDATE");
    const listed = JSON.parse(r.rows[0]?.value ?? "[]") as string[];
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
      const used = await client.query(
        "SELECT 1 FROM secrets WHERE ciphertext IS NOT NULL AND substring(ciphertext from 2 for 8) = $1 LIMIT 1",
        [Buffer.from(id, "hex")],
      );
      if ((used.rowCount ?? 0) > 0) {
        throw new WrongKeyError(`records written with root key ${id} remain, but that key is not loaded; add it to VAULT_PREVIOUS_ENCRYPTION_KEYS`);
      }
    }
    if (!keep.includes(cipher.currentKeyId)) keep.push(cipher.currentKeyId);
    await w.meta.set("root_key_ids", JSON.stringify(keep));
    return (await w.meta.get("min_envelope_version")) === "2";
  });
  if (refuseLegacy) cipher.refuseLegacyEnvelopes();
}
