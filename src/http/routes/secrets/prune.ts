import { keyPrefixOf } from "../../auth.js";
import { originOf } from "../../context.js";
import type { Route } from "../declare.js";
import { inScope } from "../scope.js";
import type { SecretRouteDeps, SecretScope } from "./secret-route.js";
import { pruned, scopedRoute } from "./secret-route.js";

/**
 * POST /prune and POST /orgs/:org_id/prune (docs/api.md "Global secrets"):
 * removes the tombstones of the scope's expired secrets; a prefix-scoped key
 * prunes only its prefix.
 */
export function pruneRoute(deps: SecretRouteDeps, s: SecretScope): Route {
  return scopedRoute(s, "post", "/prune", {
    global: "Remove the tombstones of expired global secrets.",
    org: "Remove the tombstones of the org's expired secrets.",
  }, {
    permission: s.permission.prune,
    responses: Object.assign({ 200: { description: "{pruned}", schema: pruned } }, s.scope.missing),
    handler: async (c) => {
      const origin = originOf(c);
      const keyPrefix = keyPrefixOf(c);
      const count = await inScope(deps.tx, s.scope, c, (w, scope) => deps.secrets.prune(w, scope, origin, keyPrefix));
      return c.json({ pruned: count });
    },
  });
}
