import type { Actor, AppContext } from "./context.js";
import type { Origin } from "../domain/events.js";
import type { AuditLog, AuditRecord } from "../domain/audit/log.js";
import { GLOBAL_SCOPE } from "../domain/secrets/model.js";
import type { UnitOfWork, Work } from "../store/work.js";
import type { Logger } from "../log/log.js";
import type { AuthFailureCoalescer, FailedAuthLimiter } from "./failed-auth.js";

/** The `auth.failed` row of `count` failed requests from `ip` (docs/contract.md §11). */
export function authFailedRecord(ip: string | null, count?: number): AuditRecord {
  return { scope: GLOBAL_SCOPE, action: "auth.failed", key: null, actor: null, principalId: null, ip, count };
}

/** The secret key or key id a path names, for the `key` field; null when none. */
function pathSubject(path: string): string | null {
  let rest: string;
  if (path.startsWith("/secrets/")) rest = path.slice("/secrets/".length);
  else if (path.startsWith("/keys/")) rest = path.slice("/keys/".length);
  else return null;
  try {
    const decoded = decodeURIComponent(rest);
    // Only what could be a key or an id: never store arbitrary input.
    return /^[A-Za-z0-9._~@:+=/-]{1,256}$/.test(decoded) ? decoded : null;
  } catch {
    return null;
  }
}

export interface AccessRecordDeps {
  audit: AuditLog;
  tx: UnitOfWork<Work>;
  log: Logger;
  limiter: FailedAuthLimiter;
  /** Coalesces repeated auth.failed rows per remote address and window. */
  authFailures: AuthFailureCoalescer;
}

/**
 * Completes the request's access record (docs/contract.md §11) once its
 * answer is known, and counts a 401 toward the brute-force guard:
 *
 * - a 401 counts toward the brute-force guard only when the request carried
 *   a credential (an Authorization header, `credential`): a request without
 *   one guesses nothing, and any web page can make a browser send it, so
 *   counting it would let that page lock the address out, master key
 *   included (docs/audit.md, "The brute-force guard");
 * - a 401 is recorded as `auth.failed` with the ip and no actor, one row
 *   each up to INDIVIDUAL_AUTH_FAILURES per remote address and window, then
 *   coalesced (AuthFailureCoalescer; the summary of a closed window is
 *   written with the next failure or by the periodic drain);
 * - a 403 is recorded as `auth.denied` with the actor: in the org's log
 *   for a principal key (whatever path it was refused on, so its org's
 *   auditors see it), in the global log for the master key and scoped keys;
 * - a request made with a scoped key that recorded no row of its own (a
 *   list, a query, a HEAD, a failed request: `origin.recorded` is still
 *   false) gets one: the action its route declares (`secret.listed`,
 *   `secret.checked`, `audit.queried`, `key.listed`, `webhook.listed`),
 *   else `request`, or `request.failed` for a 4xx/5xx answer.
 *
 * The row goes through the group commit before the answer leaves. Returns
 * undefined, not a promise, when the request needs no row (the hot path:
 * no promise and no await for it). If a
 * scoped request's row cannot be written the client gets 500 instead of the
 * answer (fail closed: the error propagates to the caller); a denial stays
 * a denial (the failure is logged).
 * @param forwarded whether `ip` came from a trusted proxy's X-Forwarded-For
 *   (then counted even when it claims loopback: failed-auth.ts).
 * @param origin the request's origin (undefined when authentication failed).
 * @param credential whether the request carried an Authorization header
 *   (default true: counted).
 * @returns undefined, or the promise of the rows' write.
 * @throws (rejects with) whatever writing a scoped request's row throws.
 */
export function completeAccessRecord(
  deps: AccessRecordDeps,
  c: AppContext,
  ip: string | null,
  forwarded: boolean,
  actor: Actor | undefined,
  origin: Origin | undefined,
  credential = true,
): Promise<void> | undefined {
  const status = c.res.status;
  let record: AuditRecord | undefined;
  const records: AuditRecord[] = [];
  if (status === 401) {
    if (credential) deps.limiter.fail(ip, forwarded);
    const admitted = deps.authFailures.admit(ip, forwarded);
    if (admitted.closed !== undefined) records.push(authFailedRecord(admitted.closed.ip, admitted.closed.count));
    if (admitted.record) record = authFailedRecord(ip);
  } else if (actor === undefined || origin === undefined) {
    return;
  } else if (status === 403) {
    // A principal's denials belong to its org's log, where its org's auditors look.
    const scope = actor.kind === "principal" ? actor.orgId : GLOBAL_SCOPE;
    record = { scope, action: "auth.denied", key: null, actor: origin.actor, principalId: origin.principalId, ip: origin.ip };
  } else if (actor.kind === "scoped" && (status >= 400 || origin.recorded !== true)) {
    // The route declares the action of a request whose handler records none.
    const action = status >= 400 ? "request.failed" : (c.get("auditAction") ?? "request");
    record = { scope: GLOBAL_SCOPE, action, key: pathSubject(c.req.path), actor: origin.actor, principalId: null, ip: origin.ip };
  }
  if (record !== undefined) records.push(record);
  if (records.length === 0) return undefined;
  return writeAccessRecords(deps, records, status);
}

/**
 * Writes access rows through the group commit (see completeAccessRecord).
 * @throws whatever writing the rows throws, except for a 401 or 403 (logged).
 */
async function writeAccessRecords(deps: AccessRecordDeps, records: readonly AuditRecord[], status: number): Promise<void> {
  try {
    await deps.tx.run(async (w) => {
      for (const row of records) await deps.audit.record(w, row);
    });
  } catch (err) {
    if (status === 401 || status === 403) {
      deps.log.error({ err, action: records[0]?.action }, "audit row not written");
      return;
    }
    throw err;
  }
}
