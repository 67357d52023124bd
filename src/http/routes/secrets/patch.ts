import * as v from "valibot";
import { originOf } from "../../context.js";
import type { ResponseDecl, Route } from "../declare.js";
import { byScope } from "../scope.js";
import { patchSecretBody } from "./bodies.js";
import type { SecretRouteDeps, SecretScope } from "./secret-route.js";
import { globalName, named, orNoOrg, refusableOnce, secretKeyRoute } from "./secret-route.js";

/** PATCH applies only to secrets that seal (delete=false). */
const ONLY_SEALABLE: Record<number, ResponseDecl> = { 409: { description: "the secret was created with delete=true" } };

/**
 * PATCH of a secret (docs/api.md "Global secrets", docs/orgs.md "Org-scoped
 * secrets"): a new TTL from now and/or a new read limit (read_count back to
 * 0). An org secret must have been created with delete=false (409), and a
 * new limit reactivates it when sealed.
 */
export function patchRoute(deps: SecretRouteDeps, s: SecretScope): Route {
  return secretKeyRoute(s, "patch", {
    global: "Set a new TTL (from now) and/or a new read limit (read_count resets to 0).",
    org: "Only for secrets created with delete=false: ttl_seconds sets a new TTL from now; max_reads sets a new limit, resets read_count to 0 and reactivates a sealed secret. Neither: 400.",
  }, {
    permission: s.permission.patch,
    idempotent: true,
    body: patchSecretBody,
    responses: Object.assign(
      {
        200: {
          description: `{${s.name}, updated: true}`,
          schema: byScope(s.scope, {
            global: v.object({ ...globalName, updated: v.literal(true) }),
            org: v.object({ key: v.string(), updated: v.literal(true) }),
          }),
        },
        400: { description: "neither field given, or invalid; or an invalid secret key" },
        404: { description: `missing, expired or burned${orNoOrg(s)}` },
      },
      s.sealable ? ONLY_SEALABLE : {},
    ),
    handler: async (c, { params, body }) => {
      const origin = originOf(c);
      const patch = { ttlSeconds: body.ttl_seconds, maxReads: body.max_reads };
      return refusableOnce(
        deps,
        s,
        c,
        origin,
        (w, scope) => deps.secrets.update(w, scope, params.key, patch, origin, { sealable: s.sealable }),
        (updated) => [200, named(updated, { updated: true })],
        body,
      );
    },
  });
}
