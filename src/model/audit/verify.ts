/** Result of walking the hash chain (`ephemeral-vault audit verify`). */
export type ChainReport =
  | { ok: true; rows: number; head: string }
  | { ok: false; rows: number; brokenId: number; reason: string; missingKey?: MissingKey };

/**
 * Why a chain could not be verified although nothing shows it was altered:
 * rows (from `brokenId`) are keyed with a root key that is not loaded. `keyId`
 * is the key's id (crypto/root-key.ts rootKeyId), `setting` the variable that loads it.
 */
export interface MissingKey {
  keyId: string;
  setting: "VAULT_ENCRYPTION_KEY" | "VAULT_PREVIOUS_ENCRYPTION_KEYS";
}
