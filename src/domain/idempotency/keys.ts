import { createHash } from "node:crypto";
import type { ValueCipher } from "../../crypto/cipher.js";
import type { Awaitable, Work } from "../../store/work.js";

/** An `Idempotency-Key`: 1 to 255 printable ASCII characters (docs/api.md, "Retries"). */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

/** The default window a first answer is kept for: 600 seconds (VAULT_IDEMPOTENCY_WINDOW). */
export const DEFAULT_IDEMPOTENCY_WINDOW_SECONDS = 600;

/** The scope the kept answers' AAD names: no secret's scope ("global" or an org id) can be it. */
const KEPT_SCOPE = "idempotency";

/** A kept first answer, decrypted. */
export interface FirstAnswer {
  fingerprint: Buffer;
  status: number;
  /** The answer's JSON text. */
  body: string;
}

/**
 * Idempotency keys (docs/api.md, "Retries"): a request sent with an
 * `Idempotency-Key` has its first answer kept with its change, in the same
 * unit of work, for the window; a retry with the same key and token gets
 * it again. What is kept is keyed by SHA-256 of the token's identity and
 * the key (another token's same key names another answer), holds the
 * SHA-256 of the request it answered (the same key on another request:
 * 422) and the answer encrypted under the vault's key (a read's answer
 * holds a value). Time from `now`, in milliseconds.
 */
export class IdempotencyKeys {
  constructor(private readonly deps: { cipher: ValueCipher; now: () => number; windowSeconds: number }) {}

  /** The id of a key as sent by `identity` (the token's key id, `master`, or `none` for no token). */
  idHash(identity: string, key: string): Buffer {
    return createHash("sha256").update(identity).update("\u0000").update(key).digest();
  }

  /** The fingerprint of a request: its method, path (with its query) and body text. */
  fingerprint(method: string, path: string, body: string): Buffer {
    return createHash("sha256").update(method).update("\u0000").update(path).update("\u0000").update(body).digest();
  }

  /**
   * The first answer kept for `idHash`, not past the window.
   * @throws DecryptError when it does not open (its key was dropped since: a rekey).
   */
  async kept(w: Work, idHash: Buffer): Promise<FirstAnswer | undefined> {
    const row = await w.idempotency.get(idHash, this.deps.now());
    if (row === undefined) return undefined;
    const body = this.deps.cipher.decryptRecord(row.body, { scope: KEPT_SCOPE, key: idHash.toString("hex"), createdAt: row.createdAt, valueVersion: 1 });
    return { fingerprint: row.fingerprint, status: row.status, body };
  }

  /**
   * Keeps a first answer in the unit of work of its change, for the window.
   * @throws KeptAnswerRace (store/idempotency.ts) when another unit kept one for the key first.
   */
  keep(w: Work, idHash: Buffer, fingerprint: Buffer, status: number, body: string): Awaitable<void> {
    const now = this.deps.now();
    const sealed = this.deps.cipher.encryptRecord(body, { scope: KEPT_SCOPE, key: idHash.toString("hex"), createdAt: now, valueVersion: 1 });
    return w.idempotency.insert({ idHash, fingerprint, status, body: sealed, createdAt: now, expiresAt: now + this.deps.windowSeconds * 1000 });
  }

  /** Deletes up to `batch` answers past the window (the sweeper). @returns how many. */
  prune(w: Work, batch: number): Awaitable<number> {
    return w.idempotency.pruneDue(this.deps.now(), batch);
  }
}
