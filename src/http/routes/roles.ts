import * as v from "valibot";
import type { AppContext } from "../context.js";
import { originOf } from "../context.js";
import type { Role, Roles } from "../../domain/roles.js";
import { ApiError } from "../errors.js";
import type { UnitOfWork, Work } from "../../store/work.js";
import { orgIdOf } from "../org-auth.js";
import type { RouteDecl } from "./declare.js";
import { decodeCursor, pageQuery, parse, readBody } from "./input.js";
import { listSchema, pageBody, pageQueryDocs } from "./lists.js";
import { ROLE_NAME_PATTERN, deletedSchema, permissionsField, roleNameField } from "./org-input.js";

/** POST /orgs/:org_id/roles body (docs/contract.md §2, §4 and §8). */
export const createRoleBody = v.object({
  name: roleNameField("name"),
  permissions: permissionsField,
});

/** PATCH /orgs/:org_id/roles/:name body (docs/contract.md §9). */
export const patchRoleBody = v.object({
  permissions: permissionsField,
});

export interface RoleRouteDeps {
  roles: Roles;
  tx: UnitOfWork<Work>;
}

/** A role name from the path; a name that cannot exist is 404. */
function pathRole(c: AppContext): string {
  const name = c.req.param("name") ?? "";
  if (!ROLE_NAME_PATTERN.test(name)) throw new ApiError(404, "role not found");
  return name;
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
export function roleRouteDecls(deps: RoleRouteDeps): RouteDecl[] {
  const { roles, tx } = deps;
  return [
    {
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
      handler: async (c) => {
        const body = await readBody(c, createRoleBody);
        const origin = originOf(c);
        const role = await tx.run(async (w) => roles.create(w, await orgIdOf(w, c), body.name, body.permissions, origin));
        return c.json(roleJson(role), 201);
      },
    },
    {
      method: "get",
      path: "/orgs/:org_id/roles",
      summary: "List the org's roles: the four built-in ones first, then the custom ones.",
      permission: "master",
      query: pageQueryDocs,
      responses: {
        200: {
          description: "{roles: [{name, permissions, builtin}], next_cursor?}",
          schema: listSchema("roles", {
            type: "object",
            required: ["name", "permissions", "builtin"],
            properties: { name: { type: "string" }, permissions: { type: "string" }, builtin: { type: "boolean" } },
          }),
        },
        400: { description: "invalid limit or cursor" },
        404: { description: "no such organization" },
      },
      handler: async (c) => {
        const query = parse(pageQuery, c.req.query());
        const afterId = decodeCursor(query.cursor);
        const page = await tx.run(async (w) => roles.list(w, await orgIdOf(w, c), query.limit ?? 1000, afterId));
        const items = page.items.map((r) => ({ name: r.name, permissions: r.permissions, builtin: r.builtin }));
        return c.json(pageBody("roles", items, page.nextAfterId));
      },
    },
    {
      method: "patch",
      path: "/orgs/:org_id/roles/:name",
      summary: "Replace a custom role's permissions; its principals get them on their next request. Built-in roles: 403.",
      permission: "master",
      body: patchRoleBody,
      responses: {
        200: { description: "{name, org_id, permissions}", schema: roleSchema },
        400: { description: "invalid permission string" },
        403: { description: "built-in roles cannot be modified (or the token is not the master key)" },
        404: { description: "no such organization or role" },
      },
      handler: async (c) => {
        const body = await readBody(c, patchRoleBody);
        const origin = originOf(c);
        const role = await tx.run(async (w) => {
          const orgId = await orgIdOf(w, c);
          return roles.update(w, orgId, pathRole(c), body.permissions, origin);
        });
        return c.json(roleJson(role));
      },
    },
    {
      method: "delete",
      path: "/orgs/:org_id/roles/:name",
      summary: "Delete a custom role. Built-in roles: 403. A role a principal holds: 409.",
      permission: "master",
      responses: {
        200: { description: "{deleted: true}", schema: deletedSchema },
        403: { description: "built-in roles cannot be deleted (or the token is not the master key)" },
        404: { description: "no such organization or role" },
        409: { description: "the role is assigned to principals" },
      },
      handler: async (c) => {
        const origin = originOf(c);
        await tx.run(async (w) => {
          const orgId = await orgIdOf(w, c);
          await roles.remove(w, orgId, pathRole(c), origin);
        });
        return c.json({ deleted: true });
      },
    },
  ];
}

const roleSchema = {
  type: "object",
  required: ["name", "org_id", "permissions"],
  properties: { name: { type: "string" }, org_id: { type: "string" }, permissions: { type: "string" } },
};
