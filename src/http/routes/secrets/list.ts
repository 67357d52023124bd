import { keyPrefixOf } from "../../auth.js";
import type { Route } from "../declare.js";
import { pageQuery } from "../input.js";
import { decodeCursor, pageBody } from "../lists.js";
import { inScope } from "../scope.js";
import type { SecretRouteDeps, SecretScope } from "./secret-route.js";
import { scopedRoute } from "./secret-route.js";

/**
 * GET /secrets and GET /orgs/:org_id/secrets (docs/api.md "Global secrets",
 * docs/orgs.md "Org-scoped secrets"): live secrets' metadata, never values,
 * oldest first, paged; a prefix-scoped key sees only its prefix; an org's
 * list includes its sealed secrets.
 */
export function listRoute(deps: SecretRouteDeps, s: SecretScope): Route {
  return scopedRoute(s, "get", "/secrets", {
    global: "List global secrets' metadata (never values), oldest first.",
    org: "List the org's live secrets (active and sealed), never values, oldest first.",
  }, {
    permission: s.permission.list,
    auditAction: "secret.listed",
    query: pageQuery,
    responses: Object.assign(
      {
        200: { description: "{secrets, next_cursor?}", schema: s.listSchema },
        400: { description: "invalid limit or cursor" },
      },
      s.scope.missing,
    ),
    handler: async (c, { query }) => {
      const afterId = decodeCursor(query.cursor);
      const options = { limit: query.limit ?? 1000, afterId, keyPrefix: keyPrefixOf(c), includeSealed: s.sealable };
      const found = await inScope(deps.tx, s.scope, c, (w, scope) => deps.secrets.list(w, scope, options));
      return c.json(pageBody("secrets", found.secrets.map(s.listEntry), found.nextAfterId));
    },
  });
}
