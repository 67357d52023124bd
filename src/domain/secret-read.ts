import type { ValueCipher } from "../crypto/cipher.js";
import type { SecretRecord } from "../store/secrets.js";
import type { Awaitable, Work } from "../store/work.js";
import type { Origin, SecretEventType } from "./events.js";
import { VaultError } from "../model/errors.js";
import { refuseUnreadable, sealed, SECRET_NOT_FOUND, toMeta } from "./secret-model.js";
import type { Reader, SecretMeta, SecretRead } from "./secret-model.js";

/** What a read needs of the secret lifecycle (domain/secrets.ts): its clock (ms), cipher and events. */
export interface ReadSteps {
  now(): number;
  cipher(): ValueCipher;
  emit(w: Work, type: SecretEventType, meta: SecretMeta, origin: Origin): Awaitable<void>;
}

/**
 * Reads a secret's value and counts the read, atomically (docs/api.md, the
 * secret lifecycle): the guarded UPDATE ... RETURNING admits exactly
 * max_reads readers. The read that reaches max_reads burns the secret (or
 * seals it when burnOnLimit is false); events `secret.read` then
 * `secret.burned` / `secret.sealed`. Refusals are thrown and change
 * nothing (docs/architecture.md "How the domain fails"); a secret past its
 * expires_at is refused with PastTtl, and the caller expires it in its own
 * unit of work (SecretLifecycle.expireKey), even before the sweeper runs.
 *
 * An engine that folds the lookup into the guarded count
 * (store/secrets.ts countReadByKey: PostgreSQL) serves the common read with
 * one statement; when that statement refuses, the lookup below tells why
 * (not_found, forbidden, sealed) in the same unit of work. The hot path
 * awaits only what really is a promise: on SQLite the whole read runs
 * without a microtask per store call.
 *
 * @throws VaultError "not_found" (404), PastTtl (404), "forbidden" (403)
 *   or "gone" (410), in that order of checks.
 * @throws DecryptError when the ciphertext does not open (wrong key, row
 *   moved): the unit rolls back, so the read is not counted.
 */
export async function retrieveSecret(w: Work, steps: ReadSteps, scope: string, key: string, reader: Reader, origin: Origin): Promise<SecretRead> {
  const now = steps.now();
  const folded = w.secrets.countReadByKey?.(scope, key, now, reader.principalKeyId);
  if (folded !== undefined) {
    const row = folded instanceof Promise ? await folded : folded;
    if (row) return served(w, steps, row, { readCount: row.readCount, maxReads: row.maxReads }, now, origin);
  }
  const live = w.secrets.liveForChange(scope, key);
  const row = live instanceof Promise ? await live : live;
  if (!row) throw new VaultError("not_found", SECRET_NOT_FOUND);
  refuseUnreadable(row, now, reader);
  const count = w.secrets.countRead(row);
  const counted = count instanceof Promise ? await count : count;
  if (!counted) throw row.burnOnLimit ? new VaultError("not_found", SECRET_NOT_FOUND) : sealed();
  return served(w, steps, row, counted, now, origin);
}

/**
 * A counted read's value and events: decrypts `row`'s value, emits
 * `secret.read`, and burns or seals the secret when the read reached
 * max_reads. `counted` is the count after the read.
 */
async function served(
  w: Work,
  steps: ReadSteps,
  row: SecretRecord,
  counted: { readCount: number; maxReads: number | null },
  now: number,
  origin: Origin,
): Promise<SecretRead> {
  const value = steps.cipher().decryptRecord(row.ciphertext as Buffer, { scope: row.scope, key: row.key, createdAt: row.createdAt });
  const meta = toMeta(row);
  meta.readCount = counted.readCount;
  const read = steps.emit(w, "secret.read", meta, origin);
  if (read instanceof Promise) await read;
  if (counted.maxReads !== null && counted.readCount >= counted.maxReads) {
    if (row.burnOnLimit) {
      await w.secrets.remove(row.id);
      await steps.emit(w, "secret.burned", meta, origin);
    } else {
      await w.secrets.seal(row.id, now);
      meta.state = "sealed";
      await steps.emit(w, "secret.sealed", meta, origin);
    }
  }
  return { secret: meta, value };
}
