import { createHash, timingSafeEqual } from "node:crypto";
import type { Work } from "../../store/work.js";
import type { ChangeAudit, Origin } from "../events.js";
import { GLOBAL_SCOPE } from "./model.js";
import type { SecretRead } from "./model.js";
import type { SecretLifecycle } from "./lifecycle.js";

/** The audit action of a refused reveal proof (docs/audit.md). */
export const REVEAL_REFUSED = "secret.reveal_refused";
/** The audit action that gives the reason of the burn that follows it: max_failed_reveals reached (docs/audit.md). */
export const REVEAL_LIMIT_REACHED = "secret.reveal_limit_reached";

/** A reveal proof on the wire: 32 bytes in base64url without padding (docs/share.md, "The reveal proof"). */
const PROOF_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/**
 * What a reveal of a public secret came to (docs/share.md, "The reveal proof"):
 * - `read`: the proof held (or the secret has no reveal check) and one read was counted;
 * - `missing`: no live public secret of that id (404, as every miss under /s/);
 * - `refused`: the secret needs a proof and this one was missing or wrong
 *   (403): no read counted, one refusal counted; `burned` when it was the
 *   refusal that reached max_failed_reveals.
 */
export type RevealOutcome = { kind: "read"; read: SecretRead } | { kind: "missing" } | { kind: "refused"; burned: boolean };

/** What the reveal needs: the secret lifecycle and the audit log. */
export interface RevealDeps {
  secrets: SecretLifecycle;
  audit: ChangeAudit;
}

/**
 * Whether `proof` is the one whose SHA-256 is `checkHash`, compared in
 * constant time (a proof of the wrong shape is simply wrong).
 * @param proof the base64url proof as sent, or undefined.
 * @param checkHash the stored SHA-256 (32 bytes).
 */
export function proofMatches(proof: string | undefined, checkHash: Buffer): boolean {
  if (proof === undefined || !PROOF_SHAPE.test(proof)) return false;
  const bytes = Buffer.from(proof, "base64url");
  if (bytes.length !== 32) return false;
  const hash = createHash("sha256").update(bytes).digest();
  return hash.length === checkHash.length && timingSafeEqual(hash, checkHash);
}

/**
 * The share page's reveal of a public secret (`POST /s/<id>/reveal`,
 * docs/share.md "The reveal proof"), inside one unit of work so the proof's
 * check and the read or refusal it decides commit together:
 *
 * 1. the secret is looked at (a keyed or org secret, or none: `missing`;
 *    one past its TTL is expired here and `missing`);
 * 2. a secret with a reveal check is locked by its check until the unit
 *    ends, so concurrent reveals of it run one after the other;
 * 3. a proof whose SHA-256 matches (constant time) reads as every other read does: one
 *    counted read, burn at max_reads, events; the check is deleted with a
 *    secret its last read burned;
 * 4. a missing or wrong proof counts one refusal (a guarded UPDATE: never
 *    past max_failed_reveals), audits `secret.reveal_refused`, and the
 *    refusal that reaches max_failed_reveals audits
 *    `secret.reveal_limit_reached` and burns the secret unread (`secret.burned`).
 *
 * The outcome is returned, not thrown, so that a refusal's count commits
 * (a thrown refusal rolls its unit back: docs/architecture.md "How the domain fails").
 * @param id the public id (64 hex characters, checked by the caller).
 * @param proof the proof as sent (base64url), or undefined.
 * @throws VaultError from the read (PastTtl when it is found past its TTL
 *   meanwhile, not_found), DecryptError, or a store's failure: the unit rolls back.
 */
export async function revealPublic(w: Work, deps: RevealDeps, id: string, proof: string | undefined, origin: Origin): Promise<RevealOutcome> {
  const meta = await deps.secrets.peek(w, GLOBAL_SCOPE, id, origin);
  if (meta === undefined || !meta.isPublic) return { kind: "missing" };
  // Most links have no check: only one that has takes the lock.
  const check = (await w.revealChecks.has(id)) ? await w.revealChecks.forReveal(id) : undefined;
  if (check === undefined) return { kind: "read", read: await deps.secrets.retrieve(w, GLOBAL_SCOPE, id, { principalKeyId: null }, origin) };
  if (proofMatches(proof, check.checkHash)) {
    const read = await deps.secrets.retrieve(w, GLOBAL_SCOPE, id, { principalKeyId: null }, origin);
    if (read.secret.maxReads !== null && read.secret.readCount >= read.secret.maxReads) await w.revealChecks.remove(id);
    return { kind: "read", read };
  }
  const counted = await w.revealChecks.countFailure(id);
  // At its limit already: the refusal that reached it burned the secret in a unit that committed first.
  if (counted === undefined) return { kind: "missing" };
  await deps.audit.recordFor(w, origin, GLOBAL_SCOPE, REVEAL_REFUSED, id);
  if (counted.maxFailures === null || counted.failures < counted.maxFailures) return { kind: "refused", burned: false };
  await deps.audit.recordFor(w, origin, GLOBAL_SCOPE, REVEAL_LIMIT_REACHED, id);
  await deps.secrets.burnUnread(w, GLOBAL_SCOPE, id, origin);
  await w.revealChecks.remove(id);
  return { kind: "refused", burned: true };
}

/** What a link holder's destroy came to (`POST /s/<id>/destroy`): `deleted`, `missing` (404) or `refused` (a wrong proof, 403). */
export type LinkDestroyOutcome = { kind: "deleted" } | { kind: "missing" } | { kind: "refused" };

/**
 * The recipient page's "Destroy it now" (`POST /s/<id>/destroy`,
 * docs/share.md "Receipts"): a link holder may destroy what they could
 * read, so the proof is checked as revealPublic checks it: a secret made
 * with a reveal check needs the proof whose SHA-256 it is (constant time);
 * one without is destroyed by its id alone, the capability of its reveal
 * too. Deleted through the lifecycle (audit and event `secret.deleted`,
 * which ends its receipt as `deleted`) with its reveal check, in one unit
 * of work. A wrong proof counts no refusal towards max_failed_reveals: it
 * reads nothing and destroys nothing (the caller counts it against the
 * share pages' limiter).
 * @param id the public id (64 hex characters, checked by the caller).
 * @param proof the proof as sent (base64url), or undefined.
 * @throws VaultError PastTtl when it is found past its TTL (the caller expires it: a miss); a store's failure.
 */
export async function destroyPublic(w: Work, deps: Pick<RevealDeps, "secrets">, id: string, proof: string | undefined, origin: Origin): Promise<LinkDestroyOutcome> {
  const meta = await deps.secrets.peek(w, GLOBAL_SCOPE, id, origin);
  if (meta === undefined || !meta.isPublic) return { kind: "missing" };
  const check = (await w.revealChecks.has(id)) ? await w.revealChecks.forReveal(id) : undefined;
  if (check !== undefined && !proofMatches(proof, check.checkHash)) return { kind: "refused" };
  await deps.secrets.remove(w, GLOBAL_SCOPE, id, origin);
  await w.revealChecks.remove(id);
  return { kind: "deleted" };
}

/**
 * Whether a reveal of the public secret `id` needs a proof (it was made with
 * a reveal check): the recipient page then offers Reveal only with a link
 * key of the right shape (docs/share.md, "The recipient page").
 */
export async function revealNeedsProof(w: Work, id: string): Promise<boolean> {
  return w.revealChecks.has(id);
}

/**
 * The `file_meta` the public secret `id` was made with (docs/share.md, "The
 * file's metadata before the reveal"): ciphertext the recipient page embeds
 * for its script to open with the link key. Reads no value and counts no read.
 * @returns the stored string, or undefined for none.
 */
export async function publicFileMeta(w: Work, id: string): Promise<string | undefined> {
  return w.fileMetas.get(id);
}

/**
 * Which of the public secrets `ids` were made with a reveal check: the
 * end-to-end links that only the holder of the whole link can spend at the
 * recipient page (docs/share.md, "The reveal proof"); the others are plain
 * public secrets. One lookup for them all (the console's list page: its
 * Kind `end-to-end link` or `public`, docs/console.md "Secrets").
 * @param ids public ids the caller already listed with its token.
 * @returns the subset of `ids` that have a reveal check.
 */
export async function withRevealCheck(w: Work, ids: readonly string[]): Promise<Set<string>> {
  return w.revealChecks.withCheck(ids);
}
