import * as v from "valibot";
import { originOf } from "../context.js";
import type { PrincipalKeys } from "../../domain/principal-keys.js";
import type { Principals } from "../../domain/principals.js";
import type { UnitOfWork, Work } from "../../store/work.js";
import type { AppContext } from "../context.js";
import { deletedSchema } from "./answers.js";
import type { Route } from "./declare.js";
import { route } from "./declare.js";
import { pageQuery } from "./input.js";
import { listSchema, pageBody } from "./lists.js";
import { deletedAnswer, inOrg, pageOf } from "./org-scope.js";
import { idOrNotFound, metadataField, nameField, principalJson, principalSchema, roleNameField } from "./org-input.js";
import { createdKeyJson, createdKeySchema, keyListBody, keyListSchema, newKeyBody, newKeyInput } from "./principal-keys.js";

/** POST /orgs/:org_id/principals body (docs/contract.md §2). */
export const createPrincipalBody = v.object({
  name: nameField(),
  role: roleNameField("role"),
});

/** PATCH /orgs/:org_id/principals/:id body (docs/contract.md §9); every field optional. */
export const patchPrincipalBody = v.object({
  name: v.optional(nameField()),
  role: v.optional(roleNameField("role")),
  metadata: v.optional(metadataField),
});

export interface PrincipalRouteDeps {
  principals: Principals;
  principalKeys: PrincipalKeys;
  tx: UnitOfWork<Work>;
}

const NO_PRINCIPAL = "principal not found";

/** The `{id}` of one principal's routes; an id that cannot exist is 404, after the org. */
const principalParams = v.object({ id: v.string() });
/** The `{id}` and `{key_id}` of one principal key's route. */
const principalKeyParams = v.object({ id: v.string(), key_id: v.string() });

/**
 * Principals of an org and their keys, master key only (docs/contract.md
 * §2 and §9). The master key gives a principal its first key;
 * the principal makes more through /me/keys.
 */
export function principalRoutes(deps: PrincipalRouteDeps): Route[] {
  const { principals, principalKeys, tx } = deps;
  /** Runs `fn` on the principal `rawId` of the path's org: 404 for no such org, then for no such principal. */
  const onPrincipal = <T>(c: AppContext, rawId: string, fn: (w: Work, orgId: string, id: string) => Promise<T>): Promise<T> =>
    inOrg(tx, c, async (w, orgId) => fn(w, orgId, (await principals.require(w, orgId, idOrNotFound(rawId, NO_PRINCIPAL))).id));
  return [
    route({
      method: "post",
      path: "/orgs/:org_id/principals",
      summary: "Create a principal (user or service account) with a built-in or custom role. Names are unique in the org.",
      permission: "master",
      body: createPrincipalBody,
      responses: {
        201: { description: "{id, name, org_id, role, metadata, created_at}", schema: principalSchema },
        400: { description: "invalid input, or no such role in the org" },
        404: { description: "no such organization" },
        409: { description: "a principal with this name exists in the org" },
      },
      handler: async (c, { body }) => {
        const origin = originOf(c);
        const principal = await inOrg(tx, c, (w, orgId) => principals.create(w, orgId, body.name, body.role, origin));
        return c.json(principalJson(principal), 201);
      },
    }),
    route({
      method: "get",
      path: "/orgs/:org_id/principals",
      summary: "List the org's principals, oldest first.",
      permission: "master",
      query: pageQuery,
      responses: {
        200: {
          description: "{principals, next_cursor?}",
          schema: listSchema("principals", principalSchema),
        },
        404: { description: "no such organization" },
      },
      handler: async (c, { query }) => {
        const { limit, afterId } = pageOf(query);
        const page = await inOrg(tx, c, (w, orgId) => principals.list(w, orgId, limit, afterId));
        return c.json(pageBody("principals", page.items.map(principalJson), page.nextAfterId));
      },
    }),
    route({
      method: "get",
      path: "/orgs/:org_id/principals/:id",
      summary: "One principal.",
      permission: "master",
      params: principalParams,
      responses: { 200: { description: "the principal", schema: principalSchema }, 404: { description: "no such organization or principal" } },
      handler: async (c, { params }) => {
        const principal = await inOrg(tx, c, (w, orgId) => principals.require(w, orgId, idOrNotFound(params.id, NO_PRINCIPAL)));
        return c.json(principalJson(principal));
      },
    }),
    route({
      method: "patch",
      path: "/orgs/:org_id/principals/:id",
      summary: "Change a principal's name, role and/or metadata (metadata is replaced). A new role applies to its keys' next request.",
      permission: "master",
      params: principalParams,
      body: patchPrincipalBody,
      responses: {
        200: { description: "the principal", schema: principalSchema },
        400: { description: "invalid input, or no such role in the org" },
        404: { description: "no such organization or principal" },
        409: { description: "the new name is taken in the org" },
      },
      handler: async (c, { params, body }) => {
        const origin = originOf(c);
        const principal = await inOrg(tx, c, (w, orgId) => principals.update(w, orgId, idOrNotFound(params.id, NO_PRINCIPAL), body, origin));
        return c.json(principalJson(principal));
      },
    }),
    route({
      method: "delete",
      path: "/orgs/:org_id/principals/:id",
      summary: "Delete a principal that has no active key (not revoked, valid_before not passed). No cascading deletes.",
      permission: "master",
      params: principalParams,
      responses: { 200: { description: "{deleted: true}", schema: deletedSchema }, 404: { description: "no such organization or principal" }, 409: { description: "the principal has active keys" } },
      handler: async (c, { params }) => {
        const origin = originOf(c);
        await inOrg(tx, c, (w, orgId) => principals.remove(w, orgId, idOrNotFound(params.id, NO_PRINCIPAL), origin));
        return deletedAnswer(c);
      },
    }),
    route({
      method: "post",
      path: "/orgs/:org_id/principals/:id/keys",
      summary:
        "Make a principal key (its first, typically). The vpk_ token is in `key`, shown this once. valid_after and valid_before are optional Unix seconds; valid_before must be after now and after valid_after.",
      permission: "master",
      params: principalParams,
      body: newKeyBody,
      responses: { 201: { description: "{id, name, key, valid_after, valid_before, created_at}", schema: createdKeySchema }, 400: { description: "invalid input" }, 404: { description: "no such organization or principal" } },
      handler: async (c, { params, body }) => {
        const input = newKeyInput(body);
        const origin = originOf(c);
        const created = await onPrincipal(c, params.id, (w, orgId, id) => principalKeys.create(w, orgId, id, input, origin));
        return c.json(createdKeyJson(created.key, created.token), 201);
      },
    }),
    route({
      method: "get",
      path: "/orgs/:org_id/principals/:id/keys",
      summary: "List a principal's keys (summaries, never tokens). Revoked keys are gone.",
      permission: "master",
      params: principalParams,
      query: pageQuery,
      responses: { 200: { description: "{keys, next_cursor?}", schema: keyListSchema }, 404: { description: "no such organization or principal" } },
      handler: async (c, { params, query }) => {
        const { limit, afterId } = pageOf(query);
        const page = await onPrincipal(c, params.id, (w, _orgId, id) => principalKeys.list(w, id, limit, afterId));
        return c.json(keyListBody(page));
      },
    }),
    route({
      method: "delete",
      path: "/orgs/:org_id/principals/:id/keys/:key_id",
      summary: "Revoke a principal key: deleted at once; its token gets 401 from the next request on.",
      permission: "master",
      params: principalKeyParams,
      responses: { 200: { description: "{deleted: true}", schema: deletedSchema }, 404: { description: "no such organization, principal or key" } },
      handler: async (c, { params }) => {
        const origin = originOf(c);
        await onPrincipal(c, params.id, (w, _orgId, id) => principalKeys.revoke(w, id, idOrNotFound(params.key_id, "key not found"), origin));
        return deletedAnswer(c);
      },
    }),
  ];
}
