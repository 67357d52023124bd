import * as v from "valibot";
import { originOf } from "../context.js";
import type { PrincipalKeys } from "../../domain/principal-keys.js";
import type { Principals } from "../../domain/principals.js";
import type { UnitOfWork, Work } from "../../store/work.js";
import { orgIdOf } from "../org-auth.js";
import type { RouteDecl } from "./declare.js";
import { decodeCursor, pageQuery, parse, readBody } from "./input.js";
import { listSchema, pageBody, pageQueryDocs } from "./lists.js";
import { deletedSchema, metadataField, nameField, pathId, principalJson, principalSchema, roleNameField } from "./org-input.js";
import { createdKeyJson, createdKeySchema, keyListBody, keyListSchema, newKeyBody, readNewKey } from "./principal-keys.js";

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
  keys: PrincipalKeys;
  tx: UnitOfWork<Work>;
}

const NO_PRINCIPAL = "principal not found";

/**
 * Principals of an org and their keys, master key only (docs/contract.md
 * §2 and §9). The master key gives a principal its first key;
 * the principal makes more through /me/keys.
 */
export function principalRouteDecls(deps: PrincipalRouteDeps): RouteDecl[] {
  const { principals, keys, tx } = deps;
  return [
    {
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
      handler: async (c) => {
        const body = await readBody(c, createPrincipalBody);
        const origin = originOf(c);
        const principal = await tx.run(async (w) => principals.create(w, await orgIdOf(w, c), body.name, body.role, origin));
        return c.json(principalJson(principal), 201);
      },
    },
    {
      method: "get",
      path: "/orgs/:org_id/principals",
      summary: "List the org's principals, oldest first.",
      permission: "master",
      query: pageQueryDocs,
      responses: {
        200: {
          description: "{principals, next_cursor?}",
          schema: listSchema("principals", principalSchema),
        },
        404: { description: "no such organization" },
      },
      handler: async (c) => {
        const query = parse(pageQuery, c.req.query());
        const afterId = decodeCursor(query.cursor);
        const page = await tx.run(async (w) => principals.list(w, await orgIdOf(w, c), query.limit ?? 1000, afterId));
        return c.json(pageBody("principals", page.items.map(principalJson), page.nextAfterId));
      },
    },
    {
      method: "get",
      path: "/orgs/:org_id/principals/:id",
      summary: "One principal.",
      permission: "master",
      responses: { 200: { description: "the principal", schema: principalSchema }, 404: { description: "no such organization or principal" } },
      handler: async (c) => {
        const principal = await tx.run(async (w) => {
          const orgId = await orgIdOf(w, c);
          return principals.require(w, orgId, pathId(c, "id", NO_PRINCIPAL));
        });
        return c.json(principalJson(principal));
      },
    },
    {
      method: "patch",
      path: "/orgs/:org_id/principals/:id",
      summary: "Change a principal's name, role and/or metadata (metadata is replaced). A new role applies to its keys' next request.",
      permission: "master",
      body: patchPrincipalBody,
      responses: {
        200: { description: "the principal", schema: principalSchema },
        400: { description: "invalid input, or no such role in the org" },
        404: { description: "no such organization or principal" },
        409: { description: "the new name is taken in the org" },
      },
      handler: async (c) => {
        const body = await readBody(c, patchPrincipalBody);
        const origin = originOf(c);
        const principal = await tx.run(async (w) => {
          const orgId = await orgIdOf(w, c);
          return principals.update(w, orgId, pathId(c, "id", NO_PRINCIPAL), body, origin);
        });
        return c.json(principalJson(principal));
      },
    },
    {
      method: "delete",
      path: "/orgs/:org_id/principals/:id",
      summary: "Delete a principal that has no active key (not revoked, valid_before not passed). No cascading deletes.",
      permission: "master",
      responses: { 200: { description: "{deleted: true}", schema: deletedSchema }, 404: { description: "no such organization or principal" }, 409: { description: "the principal has active keys" } },
      handler: async (c) => {
        const origin = originOf(c);
        await tx.run(async (w) => {
          const orgId = await orgIdOf(w, c);
          await principals.remove(w, orgId, pathId(c, "id", NO_PRINCIPAL), origin);
        });
        return c.json({ deleted: true });
      },
    },
    {
      method: "post",
      path: "/orgs/:org_id/principals/:id/keys",
      summary:
        "Make a principal key (its first, typically). The vpk_ token is in `key`, shown this once. valid_after and valid_before are optional Unix seconds; valid_before must be after now and after valid_after.",
      permission: "master",
      body: newKeyBody,
      responses: { 201: { description: "{id, name, key, valid_after, valid_before, created_at}", schema: createdKeySchema }, 400: { description: "invalid input" }, 404: { description: "no such organization or principal" } },
      handler: async (c) => {
        const input = await readNewKey(c);
        const origin = originOf(c);
        const created = await tx.run(async (w) => {
          const orgId = await orgIdOf(w, c);
          const id = (await principals.require(w, orgId, pathId(c, "id", NO_PRINCIPAL))).id;
          return keys.create(w, orgId, id, input, origin);
        });
        return c.json(createdKeyJson(created.key, created.token), 201);
      },
    },
    {
      method: "get",
      path: "/orgs/:org_id/principals/:id/keys",
      summary: "List a principal's keys (summaries, never tokens). Revoked keys are gone.",
      permission: "master",
      query: pageQueryDocs,
      responses: { 200: { description: "{keys, next_cursor?}", schema: keyListSchema }, 404: { description: "no such organization or principal" } },
      handler: async (c) => {
        const query = parse(pageQuery, c.req.query());
        const afterId = decodeCursor(query.cursor);
        const page = await tx.run(async (w) => {
          const orgId = await orgIdOf(w, c);
          const id = (await principals.require(w, orgId, pathId(c, "id", NO_PRINCIPAL))).id;
          return keys.list(w, id, query.limit ?? 1000, afterId);
        });
        return c.json(keyListBody(page));
      },
    },
    {
      method: "delete",
      path: "/orgs/:org_id/principals/:id/keys/:key_id",
      summary: "Revoke a principal key: deleted at once; its token gets 401 from the next request on.",
      permission: "master",
      responses: { 200: { description: "{deleted: true}", schema: deletedSchema }, 404: { description: "no such organization, principal or key" } },
      handler: async (c) => {
        const origin = originOf(c);
        await tx.run(async (w) => {
          const orgId = await orgIdOf(w, c);
          const id = (await principals.require(w, orgId, pathId(c, "id", NO_PRINCIPAL))).id;
          const keyId = pathId(c, "key_id", "key not found");
          await keys.revoke(w, id, keyId, origin);
        });
        return c.json({ deleted: true });
      },
    },
  ];
}
