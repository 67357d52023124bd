import * as v from "valibot";
import type { Role, Roles } from "../../../domain/orgs/roles.js";
import type { UnitOfWork, Work } from "../../../store/work.js";
import type { Route } from "../declare.js";
import { inOrg } from "../org-scope.js";
import { DELETED, listOp, NO_ORG, op } from "../ops.js";
import { idOrNotFound } from "../input.js";
import { permissionsField, ROLE_NAME_PATTERN, roleNameField } from "./fields.js";

/** POST /orgs/:org_id/roles body (docs/contract.md §2, §4 and §8). */
export const createRoleBody = v.object({
  name: roleNameField("name"),
  permissions: permissionsField,
});

/** PATCH /orgs/:org_id/roles/:name body (docs/contract.md §9). */
export const patchRoleBody = v.object({
  permissions: permissionsField,
});

/** A role in answers. */
const roleSchema = v.object({ name: v.string(), org_id: v.string(), permissions: v.string() });

export interface RoleRouteDeps {
  roles: Roles;
  tx: UnitOfWork<Work>;
}

/** The `{name}` path parameter of one role's routes; a name that cannot exist is 404, after the org. */
const roleParams = v.object({ name: v.string() });

/** The 404 of one role's routes. */
const NOT_FOUND = "no such organization or role";

/** A role name of the path, or 404 "role not found" for one that cannot exist. */
function roleName(raw: string): string {
  return idOrNotFound(raw, "role not found", ROLE_NAME_PATTERN);
}

function roleJson(r: Role) {
  return { name: r.name, org_id: r.orgId, permissions: r.permissions };
}

/**
 * Roles of an org, master key only (docs/contract.md
 * §2, §8 and §9): the four built-in roles are listed with `builtin: true` and
 * cannot be changed (403); custom roles are created, patched and deleted
 * (409 while a principal holds one).
 */
export function roleRoutes(deps: RoleRouteDeps): Route[] {
  const { roles, tx } = deps;
  const base = "/orgs/:org_id/roles";
  return [
    op("post", base, "master", {
      summary:
        "Create a custom role. permissions: non-empty, only the letters rRlLcCpPaAmMdD, each at most once (R L p A m D are reserved and grant nothing yet).",
      body: createRoleBody,
      ok: [201, "{name, org_id, permissions}", roleSchema],
      errors: { 400: "invalid name or permission string", 404: NO_ORG, 409: "a role with this name exists (built-in names included)" },
      run: async (c, { body }, origin) => roleJson(await inOrg(tx, c, (w, orgId) => roles.create(w, orgId, body.name, body.permissions, origin))),
    }),
    listOp(base, "master", {
      summary: "List the org's roles: the four built-in ones first, then the custom ones.",
      field: "roles",
      item: v.object({ name: v.string(), permissions: v.string(), builtin: v.boolean() }),
      description: "{roles: [{name, permissions, builtin}], next_cursor?}",
      errors: { 404: NO_ORG },
      page: (c, _params, { limit, afterId }) => inOrg(tx, c, (w, orgId) => roles.list(w, orgId, limit, afterId)),
      json: (r) => ({ name: r.name, permissions: r.permissions, builtin: r.builtin }),
    }),
    op("patch", `${base}/:name`, "master", {
      summary: "Replace a custom role's permissions; its principals get them on their next request. Built-in roles: 403.",
      params: roleParams,
      body: patchRoleBody,
      ok: [200, "{name, org_id, permissions}", roleSchema],
      errors: { 400: "invalid permission string", 403: "built-in roles cannot be modified (or the token is not the master key)", 404: NOT_FOUND },
      run: async (c, { params, body }, origin) => roleJson(await inOrg(tx, c, (w, orgId) => roles.update(w, orgId, roleName(params.name), body.permissions, origin))),
    }),
    op("delete", `${base}/:name`, "master", {
      summary: "Delete a custom role. Built-in roles: 403. A role a principal holds: 409.",
      params: roleParams,
      ok: DELETED,
      errors: { 403: "built-in roles cannot be deleted (or the token is not the master key)", 404: NOT_FOUND, 409: "the role is assigned to principals" },
      run: (c, { params }, origin) => inOrg(tx, c, (w, orgId) => roles.remove(w, orgId, roleName(params.name), origin)),
    }),
  ];
}
