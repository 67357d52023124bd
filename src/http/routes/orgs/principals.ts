import * as v from "valibot";
import type { PrincipalKeys } from "../../../domain/orgs/principal-keys.js";
import type { Principals } from "../../../domain/orgs/principals.js";
import type { UnitOfWork, Work } from "../../../store/work.js";
import type { AppContext } from "../../context.js";
import type { Route } from "../declare.js";
import { inOrg } from "../org-scope.js";
import { DELETED, listOp, NO_ORG, op } from "../ops.js";
import { idOrNotFound, nameField } from "../input.js";
import { metadataField, principalJson, principalSchema, roleNameField } from "./fields.js";
import { CREATED_KEY, createdKeyJson, createdKeySchema, keySummaryJson, keySummarySchema, newKeyBody, newKeyInput } from "./principal-keys.js";

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
/** The 404 of one principal's routes. */
const NOT_FOUND = "no such organization or principal";
/** The 400 of a body naming a role. */
const BAD_ROLE = "invalid input, or no such role in the org";

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
  const base = "/orgs/:org_id/principals";
  const one = `${base}/:id`;
  return [
    op("post", base, "master", {
      summary: "Create a principal (user or service account) with a built-in or custom role. Names are unique in the org.",
      body: createPrincipalBody,
      ok: [201, "{id, name, org_id, role, metadata, created_at}", principalSchema],
      errors: { 400: BAD_ROLE, 404: NO_ORG, 409: "a principal with this name exists in the org" },
      run: async (c, { body }, origin) => principalJson(await inOrg(tx, c, (w, orgId) => principals.create(w, orgId, body.name, body.role, origin))),
    }),
    listOp(base, "master", {
      summary: "List the org's principals, oldest first.",
      field: "principals",
      item: principalSchema,
      errors: { 404: NO_ORG },
      page: (c, _params, { limit, afterId }) => inOrg(tx, c, (w, orgId) => principals.list(w, orgId, limit, afterId)),
      json: principalJson,
    }),
    op("get", one, "master", {
      summary: "One principal.",
      params: principalParams,
      ok: [200, "the principal", principalSchema],
      errors: { 404: NOT_FOUND },
      run: async (c, { params }) => principalJson(await inOrg(tx, c, (w, orgId) => principals.require(w, orgId, idOrNotFound(params.id, NO_PRINCIPAL)))),
    }),
    op("patch", one, "master", {
      summary: "Change a principal's name, role and/or metadata (metadata is replaced). A new role applies to its keys' next request.",
      params: principalParams,
      body: patchPrincipalBody,
      ok: [200, "the principal", principalSchema],
      errors: { 400: BAD_ROLE, 404: NOT_FOUND, 409: "the new name is taken in the org" },
      run: async (c, { params, body }, origin) =>
        principalJson(await inOrg(tx, c, (w, orgId) => principals.update(w, orgId, idOrNotFound(params.id, NO_PRINCIPAL), body, origin))),
    }),
    op("delete", one, "master", {
      summary: "Delete a principal that has no active key (not revoked, valid_before not passed). No cascading deletes.",
      params: principalParams,
      ok: DELETED,
      errors: { 404: NOT_FOUND, 409: "the principal has active keys" },
      run: (c, { params }, origin) => inOrg(tx, c, (w, orgId) => principals.remove(w, orgId, idOrNotFound(params.id, NO_PRINCIPAL), origin)),
    }),
    op("post", `${one}/keys`, "master", {
      summary:
        "Make a principal key (its first, typically). The vpk_ token is in `key`, shown this once. valid_after and valid_before are optional Unix seconds; valid_before must be after now and after valid_after.",
      params: principalParams,
      body: newKeyBody,
      ok: [201, CREATED_KEY, createdKeySchema],
      errors: { 400: "invalid input", 404: NOT_FOUND },
      run: async (c, { params, body }, origin) => {
        const input = newKeyInput(body);
        const created = await onPrincipal(c, params.id, (w, orgId, id) => principalKeys.create(w, orgId, id, input, origin));
        return createdKeyJson(created.key, created.token);
      },
    }),
    listOp(`${one}/keys`, "master", {
      summary: "List a principal's keys (summaries, never tokens). Revoked keys are gone.",
      params: principalParams,
      field: "keys",
      item: keySummarySchema,
      errors: { 404: NOT_FOUND },
      page: (c, params, { limit, afterId }) => onPrincipal(c, params.id, (w, _orgId, id) => principalKeys.list(w, id, limit, afterId)),
      json: keySummaryJson,
    }),
    op("delete", `${one}/keys/:key_id`, "master", {
      summary: "Revoke a principal key: deleted at once; its token gets 401 from the next request on.",
      params: principalKeyParams,
      ok: DELETED,
      errors: { 404: "no such organization, principal or key" },
      run: (c, { params }, origin) => onPrincipal(c, params.id, (w, _orgId, id) => principalKeys.revoke(w, id, idOrNotFound(params.key_id, "key not found"), origin)),
    }),
  ];
}
