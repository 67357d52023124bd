import { originOf } from "../../context.js";
import type { Route } from "../declare.js";
import { deletedSchema } from "../answers.js";
import type { SecretRouteDeps, SecretScope } from "./secret-route.js";
import { orNoOrg, refusableOnce, secretKeyRoute } from "./secret-route.js";

/** DELETE of a secret (docs/api.md "Global secrets", docs/orgs.md "Org-scoped secrets"): at once, whatever its TTL, reads or state. */
export function deleteRoute(deps: SecretRouteDeps, s: SecretScope): Route {
  return secretKeyRoute(s, "delete", {
    global: "Delete a secret at once, whatever its TTL or remaining reads.",
    org: "Delete an org secret (active or sealed) at once.",
  }, {
    permission: s.permission.delete,
    idempotent: true,
    responses: {
      200: { description: "{deleted: true}", schema: deletedSchema },
      400: { description: "invalid secret key" },
      404: { description: `missing${orNoOrg(s)}` },
    },
    handler: async (c, { params }) => {
      const origin = originOf(c);
      return refusableOnce(
        deps,
        s,
        c,
        origin,
        (w, scope) => deps.secrets.remove(w, scope, params.key, origin),
        () => [200, { deleted: true }],
      );
    },
  });
}
