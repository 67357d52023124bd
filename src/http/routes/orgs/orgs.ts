import * as v from "valibot";
import { ApiError } from "../../errors.js";
import type { Org, Organizations } from "../../../domain/orgs/orgs.js";
import type { UnitOfWork, Work } from "../../../store/work.js";
import { int, seconds } from "../answers.js";
import type { Route } from "../declare.js";
import { inOrg } from "../org-scope.js";
import { DELETED, listOp, NO_ORG, op } from "../ops.js";
import { nameField } from "../input.js";
import { metadataField } from "./fields.js";

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
    op("post", "/orgs", "master", {
      summary: "Create an organization. Names are unique.",
      body: createOrgBody,
      ok: [201, "{id, name, created_at}", orgSchema],
      errors: { 400: "invalid input", 409: "an org with this name exists" },
      run: async (_c, { body }, origin) => orgSummary(await tx.run((w) => orgs.create(w, body.name, body.metadata, origin))),
    }),
    listOp("/orgs", "master", {
      summary: "List organizations, oldest first.",
      field: "orgs",
      item: orgSchema,
      page: (_c, _params, { limit, afterId }) => tx.run((w) => orgs.list(w, limit, afterId)),
      json: orgSummary,
    }),
    op("get", "/orgs/:org_id", "master", {
      summary: "One organization with its metadata.",
      ok: [200, "{id, name, metadata, created_at}", v.object({ ...orgFields, metadata: v.record(v.string(), v.unknown()) })],
      errors: { 404: NO_ORG },
      run: async (c) => {
        const org = await inOrg(tx, c, (w, orgId) => orgs.get(w, orgId));
        // orgIdOf() found it in the same unit of work.
        if (org === undefined) throw new ApiError(404, "organization not found");
        return { id: org.id, name: org.name, metadata: org.metadata, created_at: seconds(org.createdAt) };
      },
    }),
    op("delete", "/orgs/:org_id", "master", {
      summary:
        "Delete an empty organization. No cascading deletes: while it has principals, live secrets, custom roles or webhooks the answer is 409 naming them. Expired tombstones are pruned with it.",
      ok: DELETED,
      errors: { 404: NO_ORG, 409: "the organization is not empty" },
      run: (c, _input, origin) => inOrg(tx, c, (w, orgId) => orgs.remove(w, orgId, origin)),
    }),
  ];
}
