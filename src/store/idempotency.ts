import type { Awaitable } from "../model/awaitable.js";

/** A kept first answer (schema.sql version 22). Times are Unix milliseconds. */
export interface KeptAnswer {
  /** SHA-256 of the token's identity and the Idempotency-Key (32 bytes). */
  idHash: Buffer;
  /** SHA-256 of the method, path and body the key was first sent with. */
  fingerprint: Buffer;
  status: number;
  /** The answer's body, encrypted under the vault's key. */
  body: Buffer;
  createdAt: number;
  expiresAt: number;
}

/** The `idempotency` table, written once for both engines (store/sql/idempotency.ts). */
export interface IdempotencyStore {
  /** The kept answer of `idHash` not past its expiry at `now` (Unix ms). */
  get(idHash: Buffer, now: number): Awaitable<KeptAnswer | undefined>;
  /**
   * Keeps a first answer, in the unit of work of its change.
   * @throws KeptAnswerRace when another unit kept one for the same key
   *   first (the engine's unique violation): the caller's unit rolls back.
   */
  insert(answer: KeptAnswer): Awaitable<void>;
  /** Deletes up to `limit` answers past their expiry at `now`. @returns how many. */
  pruneDue(now: number, limit: number): Awaitable<number>;
}

/** Another unit kept an answer for the same key first (IdempotencyStore.insert): retry the request as a replay. */
export class KeptAnswerRace extends Error {
  constructor() {
    super("an answer for this Idempotency-Key was kept by another request at the same time");
    this.name = "KeptAnswerRace";
  }
}
