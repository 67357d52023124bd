import * as v from "valibot";
import { originOf } from "../context.js";
import { VaultError } from "../../domain/errors.js";
import { GLOBAL_SCOPE, PUBLIC_ID_PATTERN } from "../../domain/secret-model.js";
import type { ReplaceInput, ReplaceOutcome } from "../../domain/secret-model.js";
import { ApiError } from "../errors.js";
import { orgIdOf } from "../org-auth.js";
import type { RouteDecl } from "./declare.js";
import { readBody } from "./input.js";
import { checkValueSize, KEY_DOC, pathKey, replaceOrgSecretBody, replaceSecretBody } from "./secret-input.js";
import type { SecretRouteDeps, SecretScope } from "./secret-deps.js";

/**
 * PUT of one scope (docs/api.md "Replace a secret", docs/orgs.md): creates
 * the secret (201 `{key}`) or replaces a live one's value and limits in one
 * unit of work (200 `{key, updated: true}`), so a reader never finds the key
 * missing in between. Needs `write` (scoped keys, within their prefix) or
 * the letter `c` (principal keys); a global public id is never replaced
 * (404). Order: 403, then 400/413, then 402/404.
 */
export function replaceRouteDecl(deps: SecretRouteDeps, scope: SecretScope): RouteDecl {
  const org = scope === "org";
  const body = org ? replaceOrgSecretBody : replaceSecretBody;
  return {
    method: "put",
    path: org ? "/orgs/:org_id/secrets/:key{.+}" : "/secrets/:key{.+}",
    params: { key: org ? KEY_DOC : `${KEY_DOC}; a public secret's id (64 lower-case hex characters) answers 404` },
    summary: org
      ? "Create the org secret (201) or replace a live one's value, limits, delete flag and allowed_keys in one transaction (200): read_count back to 0, created_at kept, a sealed secret active again. Omitted fields take their create defaults. Needs the letter c."
      : "Create the secret (201) or replace a live one's value and limits in one transaction (200): read_count back to 0, created_at kept; no reader sees a 404 in between. Omitted limits mean none. Public ids cannot be replaced (404).",
    permission: org ? "org:c" : "write",
    body,
    responses: {
      200: { description: "replaced: {key, updated: true}", schema: v.object({ key: v.string(), updated: v.literal(true) }) },
      201: { description: "created: {key}", schema: v.object({ key: v.string() }) },
      400: { description: org ? "invalid input or key, or an allowed_keys id that is not a key of this org" : "invalid input or key" },
      402: { description: "a create beyond the free tier limit of 100 active secrets (a replace is never refused for it)" },
      404: { description: org ? "no such organization" : "a public secret's id: public secrets cannot be replaced" },
      413: { description: "value larger than VAULT_MAX_VALUE_BYTES, or body over 1 MiB" },
    },
    handler: async (c) => {
      const key = pathKey(c);
      const input = await readBody(c, body);
      checkValueSize(input.value, deps.maxValueBytes);
      if (!org && PUBLIC_ID_PATTERN.test(key)) throw new ApiError(404, "secret not found", { message: "public secrets cannot be replaced" });
      const actor = c.get("actor");
      const origin = originOf(c);
      const orgFields = org ? (input as v.InferOutput<typeof replaceOrgSecretBody>) : undefined;
      const allowedKeys = orgFields?.allowed_keys ? [...new Set(orgFields.allowed_keys)] : null;
      const replace: ReplaceInput = {
        scope: GLOBAL_SCOPE,
        key,
        value: input.value,
        ttlSeconds: input.ttl_seconds,
        maxReads: input.max_reads,
        burnOnLimit: orgFields?.delete !== false,
        ownerId: org && actor.kind === "principal" ? actor.principalId : null,
        allowedKeys,
      };
      const run = (): Promise<ReplaceOutcome> =>
        deps.tx.run(async (w) => {
          if (org) {
            replace.scope = await orgIdOf(w, c);
            if (allowedKeys) await deps.keys.checkAllowedKeys(w, replace.scope, allowedKeys);
          }
          return deps.secrets.replace(w, replace, origin);
        });
      const outcome = await retryOnceOnConflict(run);
      return outcome.kind === "created" ? c.json({ key }, 201) : c.json({ key, updated: true as const }, 200);
    },
  };
}

/**
 * Runs a replace, and once more when it lost a create race (409: another
 * unit created the key after this one found it missing; on PostgreSQL the
 * unique index decides and aborts the transaction): the second run finds
 * the key and replaces it, so concurrent PUTs of a new key answer one 201
 * and 200s.
 */
async function retryOnceOnConflict(run: () => Promise<ReplaceOutcome>): Promise<ReplaceOutcome> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof VaultError && err.kind === "conflict") return run();
    throw err;
  }
}
