import { newPublicId } from "../../crypto/tokens.js";
import { VaultError } from "../../model/errors.js";
import type { RequestRecord } from "../../store/requests.js";
import type { Work } from "../../store/work.js";
import type { ChangeAudit, EventSink, Origin, RequestEventType } from "../events.js";
import { cutPage } from "../paging.js";
import type { SecretLifecycle } from "../secrets/lifecycle.js";
import { GLOBAL_SCOPE } from "../secrets/model.js";
import { proofMatches, revealPublic } from "../secrets/reveal.js";
import type { RevealOutcome } from "../secrets/reveal.js";

/** A request's TTL when none is given: 7 days, in seconds (docs/requests.md, "The request"). */
export const REQUEST_TTL_DEFAULT_SECONDS = 7 * 24 * 60 * 60;
/** The longest a request stays open: 30 days, in seconds. */
export const REQUEST_TTL_MAX_SECONDS = 30 * 24 * 60 * 60;
/** The audit action of a deleted request (not a webhook event: docs/requests.md, "Events and audit"). */
export const REQUEST_DELETED = "request.deleted";
/** The refusal of a request that is not there: unknown, another scope's or owner's, past its expiry. */
export const REQUEST_NOT_FOUND = "request not found";

export interface RequestsDeps {
  secrets: SecretLifecycle;
  events: EventSink;
  audit: ChangeAudit;
  /** Current time, Unix milliseconds. */
  now: () => number;
}

/** What a new request is made of; the id is the vault's. TTL in seconds. */
export interface CreateRequestInput {
  scope: string;
  /** The scoped key or principal asking; null for the master key. */
  ownerId: string | null;
  /** The name the answer page shows (a key's or principal's, never a token). */
  asker: string;
  description: string;
  /** The asker's P-256 point, base64url (checked by the caller). */
  publicKey: string;
  /** SHA-256 of the asker's reveal proof (32 bytes), or null. */
  revealCheck: Buffer | null;
  ttlSeconds: number;
  maxReads: number;
}

/** What the answer page shows of an open request. `expiresAt` in Unix milliseconds. */
export interface OpenRequest {
  id: string;
  description: string;
  asker: string;
  publicKey: string;
  expiresAt: number;
}

/**
 * Who a request is looked up for: its scope, and the owner whose requests
 * the caller sees (undefined: every owner's, the master key or an admin).
 */
export interface RequestViewer {
  scope: string;
  ownerId: string | null | undefined;
}

/**
 * What a reveal by request id came to (`POST /r/<id>/reveal`): the answer's
 * reveal (domain/secrets/reveal.ts), or `unanswered` for an open request
 * whose proof is right (nothing counted). A request made without a reveal
 * check is never read here (its answer link's holder knows its id): refused.
 */
export type RequestRevealOutcome = RevealOutcome | { kind: "unanswered"; expiresAt: number };

/**
 * Requests (docs/requests.md): a token holder asks someone for a secret;
 * the person asked answers once, without a token, with an envelope
 * encrypted to the asker's public key; the answer is a public secret
 * (global scope, the request's read limit and TTL, its reveal check), read
 * through the one secret lifecycle. Every method takes the work handle of a
 * unit of work; refusals are thrown VaultErrors and change nothing. Time
 * from deps.now(), in milliseconds.
 */
export class Requests {
  constructor(private readonly deps: RequestsDeps) {}

  /** Makes an open request (a fresh 256-bit id) and emits `request.created`. */
  async create(w: Work, input: CreateRequestInput, origin: Origin): Promise<RequestRecord> {
    const now = this.deps.now();
    const record = await w.requests.insert(Object.assign({ id: newPublicId(), createdAt: now, expiresAt: now + input.ttlSeconds * 1000 }, input));
    await this.emit(w, "request.created", record, origin);
    return record;
  }

  /**
   * The request `id` as `viewer` sees it.
   * @throws VaultError "not_found" (404) when it is unknown, of another scope
   *   or owner, or past its expiry.
   */
  async get(w: Work, viewer: RequestViewer, id: string): Promise<RequestRecord> {
    const row = await w.requests.get(id);
    if (row === undefined || !this.visible(row, viewer)) throw new VaultError("not_found", REQUEST_NOT_FOUND);
    return row;
  }

  /**
   * A page of the requests `viewer` sees, in creation order, without those
   * past their expiry (swept or not).
   * @param afterSeq the last row of the previous page (0: the first page).
   */
  async list(w: Work, viewer: RequestViewer, page: { afterSeq: number; limit: number }): Promise<{ requests: RequestRecord[]; nextAfterSeq: number | null }> {
    const now = this.deps.now();
    const rows = await w.requests.page({ scope: viewer.scope, ownerId: viewer.ownerId, afterSeq: page.afterSeq, limit: page.limit + 1 });
    const { rows: cut, next } = cutPage(rows, page.limit, (row) => row.seq);
    return { requests: cut.filter((row) => row.expiresAt > now), nextAfterSeq: next };
  }

  /**
   * Deletes a request and its answer (when it is still there), audited as
   * `request.deleted` (and the answer's `secret.deleted`).
   * @throws VaultError "not_found" as get().
   */
  async remove(w: Work, viewer: RequestViewer, id: string, origin: Origin): Promise<void> {
    const row = await this.get(w, viewer, id);
    await w.requests.remove(row.id);
    if (row.answerId !== null && (await this.deps.secrets.peek(w, GLOBAL_SCOPE, row.answerId, origin)) !== undefined) {
      await this.deps.secrets.remove(w, GLOBAL_SCOPE, row.answerId, origin);
      await w.revealChecks.remove(row.answerId);
    }
    await this.deps.audit.recordFor(w, origin, row.scope, REQUEST_DELETED, row.id);
  }

  /**
   * What the answer page shows (`GET /r/<id>`): an open request not past
   * its expiry. A query, not a refusal: changes nothing.
   * @returns undefined for an unknown, expired or answered request (the one 404 page).
   */
  async peekOpen(w: Work, id: string): Promise<OpenRequest | undefined> {
    const row = await w.requests.get(id);
    if (row === undefined || row.state !== "open" || row.expiresAt <= this.deps.now()) return undefined;
    return { id: row.id, description: row.description, asker: row.asker, publicKey: row.publicKey, expiresAt: row.expiresAt };
  }

  /**
   * Records the one answer of an open request (`POST /r/<id>/answer`): the
   * guarded UPDATE first (store/requests.ts answer: of racing answers, on
   * one node or several, one gets through), then the answer's insert in the
   * same unit, as a public secret with the request's read limit, a TTL of the
   * request's ttl_seconds from now, and its reveal check; the request's
   * expiry becomes the answer's. Events `secret.created` and `request.answered`.
   * The answer counts against the free tier as a token holder's secret.
   * @param envelope the answer envelope's JSON text (checked by the caller).
   * @throws VaultError "not_found" (404) for an unknown request or one past
   *   its expiry; "conflict" (409) when it was answered already; "limit"
   *   (402) from the free tier: the unit rolls back, the request stays open.
   */
  async answer(w: Work, id: string, envelope: string, origin: Origin): Promise<RequestRecord> {
    const now = this.deps.now();
    const row = await w.requests.get(id);
    if (row === undefined || row.expiresAt <= now) throw new VaultError("not_found", REQUEST_NOT_FOUND);
    if (row.state !== "open") throw new VaultError("conflict", "this request was already answered");
    const answerId = newPublicId();
    const answered = await w.requests.answer(id, answerId, now, now + row.ttlSeconds * 1000);
    // Another answer came first (its unit committed while this one waited for the row).
    if (answered === undefined) throw new VaultError("conflict", "this request was already answered");
    await this.deps.secrets.create(
      w,
      {
        scope: GLOBAL_SCOPE,
        publicId: answerId,
        value: envelope,
        ttlSeconds: row.ttlSeconds,
        maxReads: row.maxReads,
        ownerId: row.scope === GLOBAL_SCOPE ? null : row.ownerId,
        revealCheck: row.revealCheck === null ? undefined : { checkHash: row.revealCheck, maxFailures: null },
      },
      origin,
    );
    await this.emit(w, "request.answered", answered, origin);
    return answered;
  }

  /**
   * A read of a request's answer by its id and the asker's reveal proof
   * (`POST /r/<id>/reveal`, docs/requests.md "Reading the answer"): for an
   * answered request, the answer's reveal (domain/secrets/reveal.ts
   * revealPublic: one counted read, burn at max_reads; a wrong proof
   * refused and audited); for an open one, `unanswered` when the proof is
   * right, `refused` when it is not (nothing counted either way).
   * @throws as revealPublic.
   */
  async reveal(w: Work, id: string, proof: string | undefined, origin: Origin): Promise<RequestRevealOutcome> {
    const row = await w.requests.get(id);
    if (row === undefined || row.expiresAt <= this.deps.now()) return { kind: "missing" };
    if (row.revealCheck === null) return { kind: "refused", burned: false };
    if (row.state === "open" || row.answerId === null) {
      return proofMatches(proof, row.revealCheck) ? { kind: "unanswered", expiresAt: row.expiresAt } : { kind: "refused", burned: false };
    }
    return revealPublic(w, { secrets: this.deps.secrets, audit: this.deps.audit }, row.answerId, proof, origin);
  }

  /**
   * The sweeper's step: deletes up to `batch` requests past their expiry;
   * an open one emits `request.expired` (an answered one's answer expires
   * as a secret).
   * @returns how many were deleted (less than `batch`: none remain).
   */
  async expireDue(w: Work, batch: number, origin: Origin): Promise<number> {
    const rows = await w.requests.due(this.deps.now(), batch);
    for (const row of rows) {
      await w.requests.remove(row.id);
      if (row.state === "open") await this.emit(w, "request.expired", row, origin);
    }
    return rows.length;
  }

  private visible(row: RequestRecord, viewer: RequestViewer): boolean {
    if (row.scope !== viewer.scope || row.expiresAt <= this.deps.now()) return false;
    return viewer.ownerId === undefined || row.ownerId === viewer.ownerId;
  }

  private emit(w: Work, type: RequestEventType, row: RequestRecord, origin: Origin) {
    return this.deps.events.requestEvent(w, { type, scope: row.scope, id: row.id, maxReads: row.maxReads, expiresAt: row.expiresAt, answerId: row.answerId }, origin);
  }
}
