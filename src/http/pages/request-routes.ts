import * as v from "valibot";
import { isAnswerEnvelope } from "../../domain/requests/answer-envelope.js";
import { REQUEST_NOT_FOUND } from "../../domain/requests/requests.js";
import type { Requests } from "../../domain/requests/requests.js";
import { PUBLIC_ID_PATTERN } from "../../domain/secrets/model.js";
import { ApiError } from "../errors.js";
import { VaultError } from "../../model/errors.js";
import { route } from "../routes/declare.js";
import type { Route } from "../routes/declare.js";
import { envelopeLimit } from "../routes/secrets/bodies.js";
import { PerAddressRate } from "./anonymous.js";
import { answerReveal, proofOf, refuseBlocked, runReveal, shareOrigin } from "./routes.js";
import type { SharePageDeps } from "./routes.js";
import { setPageHeaders } from "./security.js";
import { int, nullableInt, seconds } from "../routes/answers.js";

/** What the request routes need besides the share pages' deps. */
export interface RequestPageDeps extends SharePageDeps {
  requests: Requests;
}

/** True for the token-less paths of requests: the answer page and its routes, `/r/<id>...`. */
export function isRequestPagePath(path: string): boolean {
  return path === "/r" || path.startsWith("/r/");
}

/** A read of an answer, as `POST /s/<id>/reveal` answers it (the API's read body). */
const readSchema = v.object({
  id: v.pipe(v.string(), v.description("the answer's public id")),
  value: v.pipe(v.string(), v.description("the answer envelope (docs/requests.md): open it with the private key")),
  created_at: int,
  expires_at: nullableInt,
  max_reads: nullableInt,
  read_count: int,
});

const idParams = v.object({ id: v.pipe(v.string(), v.description("the request's id (64 hex)")) });

/**
 * The token-less routes of requests (docs/requests.md, "The answer page"),
 * mounted with the share pages (none with VAULT_SHARE_PAGE=false):
 *
 * - `POST /r/<id>/answer` `{value}`: the one answer of an open request, an
 *   answer envelope (400 otherwise), within the envelope of a value of
 *   VAULT_MAX_VALUE_BYTES (413), VAULT_SHARE_ANONYMOUS_PER_MINUTE answers per
 *   client address per minute (429 with Retry-After), the free tier (402);
 *   201 `{id, state, answered_at, expires_at}`, 409 once answered, 404 for
 *   an unknown or expired request (counted against the share pages'
 *   limiter, as a miss under /s/). Audit actor `share-page`.
 * - `POST /r/<id>/reveal` `{proof}`: a read of the answer with the asker's
 *   reveal proof (one counted read, as `POST /s/<answer id>/reveal`); 409
 *   `{error, state: "open", expires_at}` while unanswered and the proof is
 *   right; 403 for a wrong or missing proof, 404 for a request or answer
 *   that is gone.
 */
export function requestPageRoutes(deps: RequestPageDeps): Route[] {
  if (!deps.settings.page) return [];
  const answerRate = new PerAddressRate(deps.settings.anonymousPerMinute, 60_000, deps.now);
  return [
    route({
      method: "post",
      path: "/r/:id/answer",
      summary:
        "Answer a request, without a token: `value` is the answer envelope, encrypted in the browser to the request's public key (docs/requests.md). One answer per request.",
      permission: "none",
      params: idParams,
      body: v.object({ value: v.pipe(v.string("value must be a string: the answer envelope"), v.description("the answer envelope's JSON text")) }),
      responses: {
        201: {
          description: "{id, state, answered_at, expires_at}",
          schema: v.object({ id: v.string(), state: v.literal("answered"), answered_at: int, expires_at: int }),
        },
        400: { description: "value is not an answer envelope" },
        402: { description: "free tier limit of 100 active secrets reached" },
        404: { description: "no open request of this id (unknown or expired)" },
        409: { description: "the request was answered already" },
        413: { description: "value larger than the envelope of VAULT_MAX_VALUE_BYTES, or body over 1 MiB" },
        429: { description: "too many answers, or refused requests, from this address; Retry-After" },
      },
      handler: async (c, { params, body }) => {
        const client = refuseBlocked(c, deps);
        const id = params.id;
        if (!PUBLIC_ID_PATTERN.test(id)) {
          deps.shareGuard.countRefusal(client);
          throw new ApiError(404, REQUEST_NOT_FOUND);
        }
        const value = body.value;
        if (Buffer.byteLength(value, "utf8") > envelopeLimit(deps.maxValueBytes)) {
          throw new ApiError(413, "value too large", { message: `the answer may hold at most ${deps.maxValueBytes} bytes (UTF-8)` });
        }
        if (!isAnswerEnvelope(value)) {
          throw new ApiError(400, "value must be an answer envelope, encrypted to the request's public key (docs/requests.md, 'The envelope')");
        }
        const waitMs = answerRate.take(client.ip);
        if (waitMs > 0) {
          throw new ApiError(429, "too many answers from this address", {
            message: "answers are limited per address per minute; try again later",
            headers: { "Retry-After": String(Math.ceil(waitMs / 1000)) },
          });
        }
        try {
          const answered = await deps.tx.run((w) => deps.requests.answer(w, id, value, shareOrigin(client.ip)));
          setPageHeaders(c);
          return c.json({ id: answered.id, state: "answered" as const, answered_at: seconds(answered.answeredAt), expires_at: seconds(answered.expiresAt) }, 201);
        } catch (err) {
          // An answer link that names no open request is a miss, as under /s/.
          if (err instanceof VaultError && err.kind === "not_found") deps.shareGuard.countRefusal(client);
          throw err;
        }
      },
    }),
    route({
      method: "post",
      path: "/r/:id/reveal",
      summary:
        "Read a request's answer, without a token, with the asker's reveal proof `{proof}` (docs/requests.md, 'The envelope'): one counted read of the answer, as POST /s/<answer_id>/reveal.",
      permission: "none",
      params: idParams,
      responses: {
        200: { description: "{id, value, created_at, expires_at, max_reads, read_count}: value is the answer envelope", schema: readSchema },
        403: { description: "the proof is missing or wrong (or the request was made without reveal_check); nothing read" },
        404: { description: "no such request, or its answer is gone" },
        409: {
          description: "not answered yet (the proof is right); nothing counted",
          schema: v.object({ error: v.string(), state: v.literal("open"), expires_at: int }),
        },
        429: { description: "too many refused requests from this address; Retry-After" },
      },
      handler: async (c, { params }) => {
        const client = refuseBlocked(c, deps);
        const id = params.id;
        const origin = shareOrigin(client.ip);
        const proof = await proofOf(c);
        const outcome = await runReveal(deps, origin, async () =>
          PUBLIC_ID_PATTERN.test(id) ? deps.tx.run((w) => deps.requests.reveal(w, id, proof, origin)) : { kind: "missing" as const },
        );
        if (outcome.kind !== "unanswered") return answerReveal(c, deps, client, outcome);
        // The proof is right and nobody answered yet: nothing counted, nothing refused.
        setPageHeaders(c);
        return c.json({ error: "not answered yet", state: "open" as const, expires_at: seconds(outcome.expiresAt) as number }, 409);
      },
    }),
  ];
}
