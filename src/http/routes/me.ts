import * as v from "valibot";
import type { Actor, AppContext } from "../context.js";
import { originOf } from "../context.js";
import { ApiError } from "../errors.js";
import type { PrincipalKeys } from "../../domain/principal-keys.js";
import type { Principal, Principals } from "../../domain/principals.js";
import type { UnitOfWork, Work } from "../../store/work.js";
import { deletedSchema } from "./answers.js";
import type { Route } from "./declare.js";
import { route } from "./declare.js";
import { pageQuery } from "./input.js";
import { deletedAnswer, pageOf } from "./org-scope.js";
import { idOrNotFound, metadataField, principalFields, principalJson } from "./org-input.js";
import {
  createdKeyJson,
  createdKeySchema,
  keyListBody,
  keyListSchema,
  keySummaryJson,
  keySummarySchema,
  newKeyBody,
  newKeyInput,
} from "./principal-keys.js";

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
    route({
      method: "get",
      path: "/me",
      summary: "The principal behind the presented principal key, with its keys (summaries, never tokens). Other tokens: 403.",
      permission: "principal",
      responses: { 200: { description: "{id, name, role, org_id, metadata, created_at, keys}", schema: meSchema } },
      handler: async (c) => {
        const actor = me(c);
        return c.json(await tx.run(async (w) => profile(w, await principals.require(w, actor.orgId, actor.principalId))));
      },
    }),
    route({
      method: "patch",
      path: "/me",
      summary: "Replace the principal's metadata (a JSON object, at most 16 KiB serialized). Without `metadata` nothing changes.",
      permission: "principal",
      body: patchMeBody,
      responses: { 200: { description: "same shape as GET /me", schema: meSchema }, 400: { description: "invalid input" } },
      handler: async (c, { body }) => {
        const actor = me(c);
        const origin = originOf(c);
        const answer = await tx.run(async (w) =>
          profile(w, await principals.update(w, actor.orgId, actor.principalId, { metadata: body.metadata }, origin)),
        );
        return c.json(answer);
      },
    }),
    route({
      method: "post",
      path: "/me/keys",
      summary:
        "Make another key for the calling principal (any number). The vpk_ token is in `key`, shown this once. valid_after and valid_before: optional Unix seconds. The new key never outlives the calling key: its valid_before is the earlier of the requested one (none: no end) and the calling key's.",
      permission: "principal",
      body: newKeyBody,
      responses: { 201: { description: "{id, name, key, valid_after, valid_before, created_at}", schema: createdKeySchema }, 400: { description: "invalid input" } },
      handler: async (c, { body }) => {
        const input = newKeyInput(body);
        const actor = me(c);
        const origin = originOf(c);
        const created = await tx.run((w) => principalKeys.create(w, actor.orgId, actor.principalId, input, origin, actor.keyId));
        return c.json(createdKeyJson(created.key, created.token), 201);
      },
    }),
    route({
      method: "get",
      path: "/me/keys",
      summary: "List the calling principal's keys (summaries, never tokens), oldest first; the same as `keys` of GET /me, paged.",
      permission: "principal",
      query: pageQuery,
      responses: { 200: { description: "{keys, next_cursor?}", schema: keyListSchema } },
      handler: async (c, { query }) => {
        const { limit, afterId } = pageOf(query);
        const principalId = me(c).principalId;
        const page = await tx.run((w) => principalKeys.list(w, principalId, limit, afterId));
        return c.json(keyListBody(page));
      },
    }),
    route({
      method: "delete",
      path: "/me/keys/:key_id",
      summary: "Revoke one of the calling principal's own keys (the presented one included): deleted at once, 401 from the next request on.",
      permission: "principal",
      params: v.object({ key_id: v.string() }),
      responses: { 200: { description: "{deleted: true}", schema: deletedSchema }, 404: { description: "the principal has no such key" } },
      handler: async (c, { params }) => {
        const actor = me(c);
        const keyId = idOrNotFound(params.key_id, "key not found");
        const origin = originOf(c);
        await tx.run((w) => principalKeys.revoke(w, actor.principalId, keyId, origin));
        return deletedAnswer(c);
      },
    }),
  ];
}
