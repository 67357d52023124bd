import { originOf } from "../../context.js";
import type { Route } from "../declare.js";
import { route } from "../declare.js";
import { byScope, inScope } from "../scope.js";
import { keyParams, pathKeyInPrefix } from "../secret-input.js";
import { deletedSchema } from "../answers.js";
import type { SecretRouteDeps, SecretScope } from "./rules.js";
import { afterRefusal, orNoOrg } from "./rules.js";

/** DELETE of a secret (docs/api.md "Global secrets", docs/orgs.md "Org-scoped secrets"): at once, whatever its TTL, reads or state. */
export function deleteRoute(deps: SecretRouteDeps, s: SecretScope): Route {
  return route({
    method: "delete",
    path: `${s.scope.base}/secrets/:key{.+}`,
    params: keyParams(s.keyDoc),
    inPrefix: pathKeyInPrefix,
    summary: byScope(s.scope, {
      global: "Delete a secret at once, whatever its TTL or remaining reads.",
      org: "Delete an org secret (active or sealed) at once.",
    }),
    permission: s.permission.delete,
    responses: {
      200: { description: "{deleted: true}", schema: deletedSchema },
      400: { description: "invalid secret key" },
      404: { description: `missing${orNoOrg(s)}` },
    },
    handler: async (c, { params }) => {
      const origin = originOf(c);
      try {
        await inScope(deps.tx, s.scope, c, (w, scope) => deps.secrets.remove(w, scope, params.key, origin));
      } catch (err) {
        throw await afterRefusal(deps, err, origin);
      }
      return c.json({ deleted: true });
    },
  });
}
