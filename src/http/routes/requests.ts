import * as v from "valibot";
import type { AppContext } from "../context.js";
import { normalizeP256PublicKey } from "../../crypto/p256.js";
import { MAX_READS_LIMIT } from "../../domain/secrets/model.js";
import { REQUEST_TTL_DEFAULT_SECONDS, REQUEST_TTL_MAX_SECONDS } from "../../domain/requests/requests.js";
import type { RequestViewer, Requests } from "../../domain/requests/requests.js";
import type { RequestRecord } from "../../store/requests.js";
import type { UnitOfWork, Work } from "../../store/work.js";
import { ApiError } from "../errors.js";
import { int, nullableInt, seconds } from "./answers.js";
import type { Route } from "./declare.js";
import { intRange } from "./input.js";
import { DELETED, listOp, NO_ORG, op } from "./ops.js";
import { byScope, inScope, SCOPES } from "./scope.js";
import type { RouteScope } from "./scope.js";
import { PROOF_PATTERN } from "./secrets/bodies.js";

/** The name the answer page shows for a request the master key made. */
export const MASTER_ASKER = "the vault's administrator";

/** Control characters other than tab and newline: refused in a description the answer page shows. */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f]/;

/** POST /requests body (docs/requests.md, "The request"). */
export const createRequestBody = v.object({
  description: v.pipe(
    v.string("description must be a string"),
    v.trim(),
    v.minLength(1, "description must not be empty"),
    v.maxLength(1000, "description must be at most 1000 characters"),
    v.check((text) => !CONTROL.test(text), "description must not hold control characters (tab and newline are fine)"),
    v.description("What is asked for, shown to the person asked: the answer page shows it as text."),
  ),
  public_key: v.pipe(
    v.union(
      [v.string(), v.looseObject({ kty: v.string(), crv: v.string(), x: v.string(), y: v.string() })],
      "public_key must be a P-256 public key (base64url point, PEM, or JWK)",
    ),
    v.description(
      "The asker's ECDH P-256 public key: the 65-byte uncompressed point in base64url (87 characters, what the client library makes), or the compressed point, an SPKI PEM or base64 DER, or a JWK object. Stored and answered as the base64url point. Never the private key.",
    ),
  ),
  reveal_check: v.optional(
    v.pipe(
      v.string("reveal_check must be a string"),
      v.regex(PROOF_PATTERN, "reveal_check must be 43 base64url characters (a SHA-256)"),
      v.description(
        "SHA-256 of the asker's reveal proof, base64url (docs/requests.md, 'The envelope'): POST /r/<id>/reveal then needs the proof. Omitted: the answer is read by its answer_id (POST /s/<answer_id>/reveal) only.",
      ),
    ),
  ),
  ttl_seconds: v.optional(intRange("ttl_seconds", 1, REQUEST_TTL_MAX_SECONDS)),
  max_reads: v.optional(intRange("max_reads", 1, MAX_READS_LIMIT)),
});

/** A request as the API answers it (docs/requests.md, "The API"). */
const requestSchema = v.object({
  id: v.pipe(v.string(), v.description("64 hex characters: the answer link's capability")),
  url: v.pipe(v.string(), v.description("VAULT_PUBLIC_URL/r/<id>: the link to send to the person asked")),
  description: v.string(),
  asker: v.pipe(v.string(), v.description("who asked, as the answer page shows it: the key's or principal's name")),
  public_key: v.pipe(v.string(), v.description("the P-256 point, base64url")),
  state: v.picklist(["open", "answered"]),
  max_reads: int,
  ttl_seconds: int,
  created_at: int,
  expires_at: v.pipe(int, v.description("until when the request is open; once answered, until when its answer lives")),
  answered_at: nullableInt,
  answer_id: v.pipe(v.nullable(v.string()), v.description("the answer's public id, once answered")),
});

export interface RequestRouteDeps {
  requests: Requests;
  tx: UnitOfWork<Work>;
  /** VAULT_PUBLIC_URL, for `url`. */
  publicUrl: () => string;
}

/** A request as the API answers it. */
export function requestJson(r: RequestRecord, publicUrl: string) {
  return {
    id: r.id,
    url: `${publicUrl}/r/${r.id}`,
    description: r.description,
    asker: r.asker,
    public_key: r.publicKey,
    state: r.state,
    max_reads: r.maxReads,
    ttl_seconds: r.ttlSeconds,
    created_at: seconds(r.createdAt) as number,
    expires_at: seconds(r.expiresAt) as number,
    answered_at: seconds(r.answeredAt),
    answer_id: r.answerId,
  };
}

/**
 * Who the caller sees requests of: the master key, an admin scoped key and
 * an org's principals every request of the scope; another scoped key those
 * it made.
 */
function viewerOf(c: AppContext, scope: string): RequestViewer {
  const actor = c.get("actor");
  if (actor.kind === "scoped" && !actor.permissions.includes("admin")) return { scope, ownerId: actor.keyId };
  return { scope, ownerId: undefined };
}

/** The owner and the shown name of a new request. */
async function askerOf(w: Work, c: AppContext): Promise<{ ownerId: string | null; asker: string }> {
  const actor = c.get("actor");
  if (actor.kind === "scoped") return { ownerId: actor.keyId, asker: (await w.scopedKeys.byId(actor.keyId))?.name ?? actor.keyId };
  if (actor.kind === "principal") {
    return { ownerId: actor.principalId, asker: (await w.principals.get(actor.orgId, actor.principalId))?.name ?? actor.principalId };
  }
  return { ownerId: null, asker: MASTER_ASKER };
}

const idParams = v.object({ id: v.pipe(v.string(), v.description("the request's id (64 hex)")) });
const idParamsOrg = v.object({ org_id: v.string(), id: v.pipe(v.string(), v.description("the request's id (64 hex)")) });

/** The routes of one scope. */
function scopeRoutes(deps: RequestRouteDeps, s: RouteScope): Route[] {
  const { tx, requests } = deps;
  const perm = byScope(s, {
    global: { create: "write", list: "read", delete: "delete" },
    org: { create: "org:c", list: "org:l", delete: "org:d" },
  } as const);
  const missing = byScope(s, { global: {}, org: { 404: NO_ORG } });
  const params = byScope(s, { global: idParams, org: idParamsOrg });
  return [
    op("post", `${s.base}/requests`, perm.create, {
      summary:
        "Ask someone for a secret (docs/requests.md): the answer link /r/<id> is what you send; the person answers in the browser, encrypted to public_key (made on your side: the private key never reaches the vault).",
      body: createRequestBody,
      ok: [201, "the request", requestSchema],
      errors: Object.assign({ 400: "invalid input, or public_key is not a P-256 public key" }, missing),
      run: async (c, { body }, origin) => {
        const publicKey = normalizeP256PublicKey(body.public_key);
        if (publicKey === undefined) throw new ApiError(400, "public_key must be a P-256 public key (the 65-byte point in base64url, PEM, or JWK)");
        const created = await inScope(tx, s, c, async (w, scope) => {
          const who = await askerOf(w, c);
          const input = {
            scope,
            ownerId: who.ownerId,
            asker: who.asker,
            description: body.description,
            publicKey,
            revealCheck: body.reveal_check === undefined ? null : Buffer.from(body.reveal_check, "base64url"),
            ttlSeconds: body.ttl_seconds ?? REQUEST_TTL_DEFAULT_SECONDS,
            maxReads: body.max_reads ?? 1,
          };
          return requests.create(w, input, origin);
        });
        return requestJson(created, deps.publicUrl());
      },
    }),
    listOp(`${s.base}/requests`, perm.list, {
      summary: "List requests, oldest first: a scoped key without admin sees those it made.",
      auditAction: "request.listed",
      field: "requests",
      item: requestSchema,
      errors: missing,
      page: async (c, _params, { limit, afterId }) => {
        const page = await inScope(tx, s, c, (w, scope) => requests.list(w, viewerOf(c, scope), { afterSeq: afterId ?? 0, limit }));
        return { items: page.requests, nextAfterId: page.nextAfterSeq };
      },
      json: (r: RequestRecord) => requestJson(r, deps.publicUrl()),
    }),
    op("get", `${s.base}/requests/:id`, perm.list, {
      summary: "One request; answered: answer_id, the answer's public id.",
      params,
      ok: [200, "the request", requestSchema],
      errors: Object.assign({}, missing, { 404: "no such request (or it expired), or no such organization" }),
      run: async (c, { params: p }) =>
        requestJson(await inScope(tx, s, c, (w, scope) => requests.get(w, viewerOf(c, scope), p.id)), deps.publicUrl()),
    }),
    op("delete", `${s.base}/requests/:id`, perm.delete, {
      summary: "Delete a request, and its answer when there is one.",
      params,
      ok: DELETED,
      errors: Object.assign({}, missing, { 404: "no such request (or it expired), or no such organization" }),
      run: (c, { params: p }, origin) => inScope(tx, s, c, (w, scope) => requests.remove(w, viewerOf(c, scope), p.id, origin)),
    }),
  ];
}

/**
 * Requests (docs/requests.md): `POST/GET /requests`, `GET/DELETE
 * /requests/:id`, and their org twins under `/orgs/:org_id` (create `c`,
 * list and get `l`, delete `d`). The answer and its read are the token-less
 * routes under `/r/` (pages/request-routes.ts).
 */
export function requestRoutes(deps: RequestRouteDeps): Route[] {
  return SCOPES.flatMap((s) => scopeRoutes(deps, s));
}
