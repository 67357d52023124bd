import type { AppContext } from "../context.js";
import { IDEMPOTENCY_KEY_PATTERN } from "../../domain/idempotency/keys.js";
import type { IdempotencyKeys } from "../../domain/idempotency/keys.js";
import { KeptAnswerRace } from "../../store/idempotency.js";
import type { Awaitable, Work } from "../../store/work.js";
import { ApiError } from "../errors.js";

/** The request header of a retry-safe request (docs/api.md, "Retries"). */
export const IDEMPOTENCY_HEADER = "Idempotency-Key";

/** What an idempotent route answers: a status and a JSON body. */
export type Answer = readonly [status: number, body: unknown];

/** Who sent a request, for the key's scope: another token's same key names another answer. */
function identityOf(c: AppContext): string {
  const actor = c.get("actor") as { kind: string; keyId?: string } | undefined;
  if (actor === undefined) return "none";
  return actor.keyId ?? actor.kind;
}

/**
 * Answers a request whose change runs in `run`'s unit of work, once per
 * `Idempotency-Key` (docs/api.md, "Retries"): without the header, `run`
 * then `render`, as any route. With it, inside the one unit of work:
 *
 * - a first answer kept for this token's key, for the same request
 *   (method, path, `body`): answered again, with `Idempotent-Replayed:
 *   true`, and `run` is not called (no second read, create or burn);
 * - kept for another request: 422, nothing done;
 * - none: `run`, then `render`'s answer is kept with the change (encrypted)
 *   for VAULT_IDEMPOTENCY_WINDOW seconds and answered.
 *
 * A refusal `run` throws rolls its unit back and keeps nothing: a retry
 * runs again. Two identical requests at once: one keeps its answer, the
 * other's unit rolls back (KeptAnswerRace, or the refusal its change meets
 * once the first committed) and is answered the kept one.
 * @param inUnit runs a unit of work the way the route does (its scope, its refusal handling).
 * @param body the request's body as the route read it (undefined: none).
 * @throws ApiError 400 for a malformed key, 422 for a key used on another request; what `run` throws.
 */
export async function answerOnce<T>(
  c: AppContext,
  keys: IdempotencyKeys,
  inUnit: <R>(fn: (w: Work, scope: string) => Awaitable<R>) => Promise<R>,
  run: (w: Work, scope: string) => Awaitable<T>,
  render: (result: T) => Answer,
  body?: unknown,
): Promise<Response> {
  const key = c.req.header(IDEMPOTENCY_HEADER);
  if (key === undefined) {
    const [status, json] = render(await inUnit(run));
    return c.json(json, status as 200);
  }
  if (!IDEMPOTENCY_KEY_PATTERN.test(key)) throw new ApiError(400, "Idempotency-Key must be 1 to 255 printable ASCII characters");
  const idHash = keys.idHash(identityOf(c), key);
  const url = new URL(c.req.url);
  const fingerprint = keys.fingerprint(c.req.method, url.pathname + url.search, body === undefined ? "" : JSON.stringify(body));
  const unit = (w: Work, scope: string) =>
    (async () => {
      const kept = await keys.kept(w, idHash);
      if (kept !== undefined) {
        if (!kept.fingerprint.equals(fingerprint)) {
          throw new ApiError(422, "this Idempotency-Key was used with another request", {
            message: "an Idempotency-Key names one request (method, path and body) for the window; use a new key for a new request",
          });
        }
        return { replayed: true, status: kept.status, text: kept.body };
      }
      const [status, json] = render(await run(w, scope));
      const text = JSON.stringify(json);
      await keys.keep(w, idHash, fingerprint, status, text);
      return { replayed: false, status, text };
    })();
  let answer: { replayed: boolean; status: number; text: string };
  try {
    answer = await inUnit(unit);
  } catch (err) {
    if (err instanceof ApiError && err.status === 422) throw err;
    // The same request sent twice at once: the other one's change came first, so this one's unit
    // rolled back, refused (the read it waited for burned the secret) or losing the key's row
    // (KeptAnswerRace). Answer the one kept, if there is one for this request now.
    const kept = await inUnit((w) => keys.kept(w, idHash));
    if (kept === undefined || !kept.fingerprint.equals(fingerprint)) {
      if (err instanceof KeptAnswerRace) answer = await inUnit(unit);
      else throw err;
    } else {
      answer = { replayed: true, status: kept.status, text: kept.body };
    }
  }
  const headers: Record<string, string> = { "Content-Type": "application/json" };
  if (answer.replayed) headers["Idempotent-Replayed"] = "true";
  return c.body(answer.text, answer.status as 200, headers);
}
