import * as v from "valibot";
import { originOf } from "../context.js";
import { ApiError } from "../errors.js";
import type { Org, Organizations } from "../../domain/orgs.js";
import type { UnitOfWork, Work } from "../../store/work.js";
import { deletedSchema, int } from "./answers.js";
import type { Route } from "./declare.js";
import { route } from "./declare.js";
import { pageQuery, seconds } from "./input.js";
import { listSchema, pageBody } from "./lists.js";
import { deletedAnswer, inOrg, pageOf } from "./org-scope.js";
import { metadataField, nameField } from "./org-input.js";

/** POST /orgs body (docs/orgs.md, docs/contract.md §4). */
export const createOrgBody = v.object({
  name: nameField(),
  metadata: v.optional(metadataField),
});

/** An organization in answers. */
const orgFields = { id: v.string(), name: v.string(), created_at: int };
const orgSchema = v.object(orgFields);

export interface OrgRouteDeps {
  orgs: Organizations;
  tx: UnitOfWork<Work>;
}

function orgSummary(o: Org) {
  return { id: o.id, name: o.name, created_at: seconds(o.createdAt) };
}

/**
 * Organizations, master key only (docs/contract.md
 * §2, §8 and §9): create, list, get, delete (409 while anything remains).
 */
export function orgManagementRoutes(deps: OrgRouteDeps): Route[] {
  const { orgs, tx } = deps;
  return [
    route({
      method: "post",
      path: "/orgs",
      summary: "Create an organization. Names are unique.",
      permission: "master",
      body: createOrgBody,
      responses: {
        201: { description: "{id, name, created_at}", schema: orgSchema },
        400: { description: "invalid input" },
        409: { description: "an org with this name exists" },
      },
      handler: async (c, { body }) => {
        const origin = originOf(c);
        const org = await tx.run((w) => orgs.create(w, body.name, body.metadata, origin));
        return c.json(orgSummary(org), 201);
      },
    }),
    route({
      method: "get",
      path: "/orgs",
      summary: "List organizations, oldest first.",
      permission: "master",
      query: pageQuery,
      responses: {
        200: { description: "{orgs, next_cursor?}", schema: listSchema("orgs", orgSchema) },
        400: { description: "invalid limit or cursor" },
      },
      handler: async (c, { query }) => {
        const { limit, afterId } = pageOf(query);
        const page = await tx.run((w) => orgs.list(w, limit, afterId));
        return c.json(pageBody("orgs", page.items.map(orgSummary), page.nextAfterId));
      },
    }),
    route({
      method: "get",
      path: "/orgs/:org_id",
      summary: "One organization with its metadata.",
      permission: "master",
      responses: {
        200: {
          description: "{id, name, metadata, created_at}",
          schema: v.object({ ...orgFields, metadata: v.record(v.string(), v.unknown()) }),
        },
        404: { description: "no such organization" },
      },
      handler: async (c) => {
        const org = await inOrg(tx, c, (w, orgId) => orgs.get(w, orgId));
        // orgIdOf() found it in the same unit of work.
        if (org === undefined) throw new ApiError(404, "organization not found");
        return c.json({ id: org.id, name: org.name, metadata: org.metadata, created_at: seconds(org.createdAt) });
      },
    }),
    route({
      method: "delete",
      path: "/orgs/:org_id",
      summary:
        "Delete an empty organization. No cascading deletes: while it has principals, live secrets, custom roles or webhooks the answer is 409 naming them. Expired tombstones are pruned with it.",
      permission: "master",
      responses: {
        200: { description: "{deleted: true}", schema: deletedSchema },
        404: { description: "no such organization" },
        409: { description: "the organization is not empty" },
      },
      handler: async (c) => {
        const origin = originOf(c);
        await inOrg(tx, c, (w, orgId) => orgs.remove(w, orgId, origin));
        return deletedAnswer(c);
      },
    }),
  ];
}
