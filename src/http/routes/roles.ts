import * as v from "valibot";
import { originOf } from "../context.js";
import type { Role, Roles } from "../../domain/roles.js";
import type { UnitOfWork, Work } from "../../store/work.js";
import { deletedSchema } from "./answers.js";
import type { Route } from "./declare.js";
import { route } from "./declare.js";
import { pageQuery } from "./input.js";
import { listSchema, pageBody } from "./lists.js";
import { deletedAnswer, inOrg, pageOf } from "./org-scope.js";
import { idOrNotFound, ROLE_NAME_PATTERN, permissionsField, roleNameField } from "./org-input.js";

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
  return [
    route({
      method: "post",
      path: "/orgs/:org_id/roles",
      summary:
        "Create a custom role. permissions: non-empty, only the letters rRlLcCpPaAmMdD, each at most once (R L p A m D are reserved and grant nothing yet).",
      permission: "master",
      body: createRoleBody,
      responses: {
        201: { description: "{name, org_id, permissions}", schema: roleSchema },
        400: { description: "invalid name or permission string" },
        404: { description: "no such organization" },
        409: { description: "a role with this name exists (built-in names included)" },
      },
      handler: async (c, { body }) => {
        const origin = originOf(c);
        const role = await inOrg(tx, c, (w, orgId) => roles.create(w, orgId, body.name, body.permissions, origin));
        return c.json(roleJson(role), 201);
      },
    }),
    route({
      method: "get",
      path: "/orgs/:org_id/roles",
      summary: "List the org's roles: the four built-in ones first, then the custom ones.",
      permission: "master",
      query: pageQuery,
      responses: {
        200: {
          description: "{roles: [{name, permissions, builtin}], next_cursor?}",
          schema: listSchema("roles", v.object({ name: v.string(), permissions: v.string(), builtin: v.boolean() })),
        },
        400: { description: "invalid limit or cursor" },
        404: { description: "no such organization" },
      },
      handler: async (c, { query }) => {
        const { limit, afterId } = pageOf(query);
        const page = await inOrg(tx, c, (w, orgId) => roles.list(w, orgId, limit, afterId));
        const items = page.items.map((r) => ({ name: r.name, permissions: r.permissions, builtin: r.builtin }));
        return c.json(pageBody("roles", items, page.nextAfterId));
      },
    }),
    route({
      method: "patch",
      path: "/orgs/:org_id/roles/:name",
      summary: "Replace a custom role's permissions; its principals get them on their next request. Built-in roles: 403.",
      permission: "master",
      params: roleParams,
      body: patchRoleBody,
      responses: {
        200: { description: "{name, org_id, permissions}", schema: roleSchema },
        400: { description: "invalid permission string" },
        403: { description: "built-in roles cannot be modified (or the token is not the master key)" },
        404: { description: "no such organization or role" },
      },
      handler: async (c, { params, body }) => {
        const origin = originOf(c);
        const role = await inOrg(tx, c, (w, orgId) => roles.update(w, orgId, roleName(params.name), body.permissions, origin));
        return c.json(roleJson(role));
      },
    }),
    route({
      method: "delete",
      path: "/orgs/:org_id/roles/:name",
      summary: "Delete a custom role. Built-in roles: 403. A role a principal holds: 409.",
      permission: "master",
      params: roleParams,
      responses: {
        200: { description: "{deleted: true}", schema: deletedSchema },
        403: { description: "built-in roles cannot be deleted (or the token is not the master key)" },
        404: { description: "no such organization or role" },
        409: { description: "the role is assigned to principals" },
      },
      handler: async (c, { params }) => {
        const origin = originOf(c);
        await inOrg(tx, c, (w, orgId) => roles.remove(w, orgId, roleName(params.name), origin));
        return deletedAnswer(c);
      },
    }),
  ];
}
