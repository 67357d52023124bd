import type { ValueCipher } from "../../crypto/cipher.js";
import type { SecretRecord } from "../../store/secrets.js";
import { andThen } from "../../store/work.js";
import type { Awaitable, Work } from "../../store/work.js";
import type { Origin, SecretEventType } from "../events.js";
import { VaultError } from "../../model/errors.js";
import { refuseUnreadable, sealed, SECRET_NOT_FOUND, toMeta } from "./model.js";
import type { Reader, SecretMeta, SecretRead } from "./model.js";

/** What a read needs of the secret lifecycle (domain/secrets/lifecycle.ts): its clock (ms), cipher and events. */
export interface ReadSteps {
  now(): number;
  cipher(): ValueCipher;
  emit(w: Work, type: SecretEventType, meta: SecretMeta, origin: Origin): Awaitable<void>;
}

/**
 * Reads a secret's value and counts the read, atomically (docs/api.md, the
 * secret lifecycle): the store's one guarded count (store/secrets.ts
 * countReadByKey, the read rule of docs/contract.md §6) admits exactly
 * max_reads readers. The read that reaches max_reads burns the secret (or
 * seals it when burnOnLimit is false); events `secret.read` then
 * `secret.burned` / `secret.sealed`. Refusals are thrown and change
 * nothing (docs/architecture.md "How the domain fails"); a secret past its
 * expires_at is refused with PastTtl, and the caller expires it in its own
 * unit of work (SecretLifecycle.expireKey), even before the sweeper runs.
 *
 * The store decides whether a read is counted; the domain alone turns "not
 * counted" into an answer: it looks the row up in the same unit of work and
 * tells why (refused). Steps chain with andThen (store/work.ts): on SQLite
 * the whole read runs without a microtask per store call.
 *
 * @throws VaultError "not_found" (404), PastTtl (404), "forbidden" (403)
 *   or "gone" (410), in that order of checks.
 * @throws DecryptError when the ciphertext does not open (wrong key, row
 *   moved): the unit rolls back, so the read is not counted.
 */
export async function retrieveSecret(w: Work, steps: ReadSteps, scope: string, key: string, reader: Reader, origin: Origin): Promise<SecretRead> {
  const now = steps.now();
  return andThen(w.secrets.countReadByKey(scope, key, now, reader.principalKeyId), (row) =>
    row === undefined ? andThen(w.secrets.liveForChange(scope, key), (found) => refused(found, now, reader)) : served(w, steps, row, now, origin),
  );
}

/**
 * Why a read was not counted, thrown: no live row ("not_found"), else the
 * row's refusal (refuseUnreadable: PastTtl, "forbidden", "gone"), else a
 * row whose reads were taken meanwhile (at its limit: "not_found" when it
 * burns, "gone" when it seals). `now` in Unix milliseconds.
 * @throws always, one of those.
 */
function refused(row: SecretRecord | undefined, now: number, reader: Reader): never {
  if (!row) throw new VaultError("not_found", SECRET_NOT_FOUND);
  refuseUnreadable(row, now, reader);
  throw row.burnOnLimit ? new VaultError("not_found", SECRET_NOT_FOUND) : sealed();
}

/**
 * A counted read's value and events: decrypts `row`'s value (the row as
 * counted: its readCount after this read), emits `secret.read`, and burns
 * or seals the secret when the read reached max_reads. Synchronous while
 * the stores and sinks answer synchronously.
 */
function served(w: Work, steps: ReadSteps, row: SecretRecord, now: number, origin: Origin): Awaitable<SecretRead> {
  // The row is its own place (scope, key, created_at, value version): the AAD its ciphertext must carry.
  const value = steps.cipher().decryptRecord(row.ciphertext as Buffer, row);
  const meta = toMeta(row);
  const read: SecretRead = { secret: meta, value };
  return andThen(steps.emit(w, "secret.read", meta, origin), () => {
    if (row.maxReads === null || row.readCount < row.maxReads) return read;
    return andThen(lastRead(w, steps, row, meta, now, origin), () => read);
  });
}

/** The read that reached max_reads: burns the secret, or seals it when burnOnLimit is false, and emits the event. */
async function lastRead(w: Work, steps: ReadSteps, row: SecretRecord, meta: SecretMeta, now: number, origin: Origin): Promise<void> {
  if (row.burnOnLimit) {
    await w.secrets.remove(row.id);
    await steps.emit(w, "secret.burned", meta, origin);
  } else {
    await w.secrets.seal(row.id, now);
    meta.state = "sealed";
    await steps.emit(w, "secret.sealed", meta, origin);
  }
}
