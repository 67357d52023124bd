import * as v from "valibot";
import type { Actor, AppContext } from "../../context.js";
import { ApiError } from "../../errors.js";
import type { PrincipalKeys } from "../../../domain/orgs/principal-keys.js";
import type { Principal, Principals } from "../../../domain/orgs/principals.js";
import type { UnitOfWork, Work } from "../../../store/work.js";
import type { Route } from "../declare.js";
import { DELETED, listOp, op } from "../ops.js";
import { metadataField, principalFields, principalJson } from "./fields.js";
import { idOrNotFound } from "../input.js";
import { CREATED_KEY, createdKeyJson, createdKeySchema, keySummaryJson, keySummarySchema, newKeyBody, newKeyInput } from "./principal-keys.js";

/** PATCH /me body (docs/orgs.md): metadata replaces the stored object. */
export const patchMeBody = v.object({
  metadata: v.optional(metadataField),
});

/** GET /me: the principal and its keys' summaries. */
const meSchema = v.object({ ...principalFields, keys: v.array(keySummarySchema) });

export interface MeRouteDeps {
  principals: Principals;
  principalKeys: PrincipalKeys;
  tx: UnitOfWork<Work>;
}

type PrincipalActor = Extract<Actor, { kind: "principal" }>;

/**
 * The calling principal key's actor (needPrincipal() ran before).
 * @throws ApiError 403 for any other actor.
 */
function me(c: AppContext): PrincipalActor {
  const actor = c.get("actor");
  if (actor.kind !== "principal") throw new ApiError(403, "this endpoint requires a principal key");
  return actor;
}

/**
 * The current principal, principal keys only (docs/orgs.md,
 * docs/contract.md §8: other tokens get 403): its profile and
 * keys, its metadata, and making or revoking its own keys.
 */
export function meRoutes(deps: MeRouteDeps): Route[] {
  const { principals, principalKeys, tx } = deps;
  const profile = async (w: Work, p: Principal) => Object.assign(principalJson(p), { keys: (await principalKeys.all(w, p.id)).map(keySummaryJson) });
  return [
    op("get", "/me", "principal", {
      summary: "The principal behind the presented principal key, with its keys (summaries, never tokens). Other tokens: 403.",
      ok: [200, "{id, name, role, org_id, metadata, created_at, keys}", meSchema],
      run: (c) => {
        const actor = me(c);
        return tx.run(async (w) => profile(w, await principals.require(w, actor.orgId, actor.principalId)));
      },
    }),
    op("patch", "/me", "principal", {
      summary: "Replace the principal's metadata (a JSON object, at most 16 KiB serialized). Without `metadata` nothing changes.",
      body: patchMeBody,
      ok: [200, "same shape as GET /me", meSchema],
      errors: { 400: "invalid input" },
      run: (c, { body }, origin) => {
        const actor = me(c);
        return tx.run(async (w) => profile(w, await principals.update(w, actor.orgId, actor.principalId, { metadata: body.metadata }, origin)));
      },
    }),
    op("post", "/me/keys", "principal", {
      summary:
        "Make another key for the calling principal (any number). The vpk_ token is in `key`, shown this once. valid_after and valid_before: optional Unix seconds. The new key never outlives the calling key: its valid_before is the earlier of the requested one (none: no end) and the calling key's.",
      body: newKeyBody,
      ok: [201, CREATED_KEY, createdKeySchema],
      errors: { 400: "invalid input" },
      run: async (c, { body }, origin) => {
        const input = newKeyInput(body);
        const actor = me(c);
        const created = await tx.run((w) => principalKeys.create(w, actor.orgId, actor.principalId, input, origin, actor.keyId));
        return createdKeyJson(created.key, created.token);
      },
    }),
    listOp("/me/keys", "principal", {
      summary: "List the calling principal's keys (summaries, never tokens), oldest first; the same as `keys` of GET /me, paged.",
      field: "keys",
      item: keySummarySchema,
      page: (c, _params, { limit, afterId }) => {
        const principalId = me(c).principalId;
        return tx.run((w) => principalKeys.list(w, principalId, limit, afterId));
      },
      json: keySummaryJson,
    }),
    op("delete", "/me/keys/:key_id", "principal", {
      summary: "Revoke one of the calling principal's own keys (the presented one included): deleted at once, 401 from the next request on.",
      params: v.object({ key_id: v.string() }),
      ok: DELETED,
      errors: { 404: "the principal has no such key" },
      run: (c, { params }, origin) => {
        const actor = me(c);
        const keyId = idOrNotFound(params.key_id, "key not found");
        return tx.run((w) => principalKeys.revoke(w, actor.principalId, keyId, origin));
      },
    }),
  ];
}
