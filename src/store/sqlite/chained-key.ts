import { PUBLIC_ID_PATTERN } from "../../model/records.js";

/**
 * True for a row key the audit key chain (and the key spans) cover: set,
 * and not of a public id's shape (docs/audit.md). The key chain
 * (store/sqlite/audit/key-chain.ts) and the read tally's replay (tally/read-replay.ts)
 * share it.
 */
export function chainedKey(key: string | null): key is string {
  return key !== null && !PUBLIC_ID_PATTERN.test(key);
}
