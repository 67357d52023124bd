import * as v from "valibot";
import type { AppContext } from "../../context.js";
import { originOf } from "../../context.js";
import { answerOnce } from "../idempotent.js";
import type { Awaitable, Work } from "../../../store/work.js";
import { VaultError } from "../../../model/errors.js";
import { PUBLIC_ID_PATTERN } from "../../../domain/secrets/model.js";
import type { ReplaceInput, ReplaceOutcome } from "../../../domain/secrets/model.js";
import { ApiError } from "../../errors.js";
import type { Route } from "../declare.js";
import { route } from "../declare.js";
import { byScope } from "../scope.js";
import { checkValueSize, replaceOrgSecretBody, replaceSecretBody } from "./bodies.js";
import type { SecretRouteDeps, SecretScope } from "./secret-route.js";
import { KEY_DOC, keyParams, pathKeyInPrefix } from "./secret-route.js";

/** What a PUT's replace takes beyond the value and limits: the burn rule, owner and allowed_keys. */
type ReplaceExtras = Pick<ReplaceInput, "burnOnLimit" | "ownerId" | "allowedKeys">;

/** The PUT of one scope: its body, documentation and the fields only it has. */
interface ReplaceTwin<B extends typeof replaceSecretBody | typeof replaceOrgSecretBody> {
  body: B;
  keyDoc: string;
  summary: string;
  invalid: string;
  notFound: string;
  /** Refuses a key the scope never replaces, before any unit of work. */
  refuseKey: (key: string) => void;
  extras: (c: AppContext, body: v.InferOutput<B>) => ReplaceExtras;
}

const GLOBAL_PUT: ReplaceTwin<typeof replaceSecretBody> = {
  body: replaceSecretBody,
  keyDoc: `${KEY_DOC}; a public secret's id (64 lower-case hex characters) answers 404`,
  summary:
    "Create the secret (201) or replace a live one's value and limits in one transaction (200): read_count back to 0, created_at kept; no reader sees a 404 in between. Omitted limits mean none. Public ids cannot be replaced (404).",
  invalid: "invalid input or key",
  notFound: "a public secret's id: public secrets cannot be replaced",
  refuseKey: (key) => {
    if (PUBLIC_ID_PATTERN.test(key)) throw new ApiError(404, "secret not found", { message: "public secrets cannot be replaced" });
  },
  extras: () => ({ burnOnLimit: true, ownerId: null, allowedKeys: null }),
};

const ORG_PUT: ReplaceTwin<typeof replaceOrgSecretBody> = {
  body: replaceOrgSecretBody,
  keyDoc: KEY_DOC,
  summary:
    "Create the org secret (201) or replace a live one's value, limits, delete flag and allowed_keys in one transaction (200): read_count back to 0, created_at kept, a sealed secret active again. Omitted fields take their create defaults. Needs the letter c.",
  invalid: "invalid input or key, or an allowed_keys id that is not a key of this org",
  notFound: "no such organization",
  refuseKey: () => {},
  extras: (c, body) => {
    const actor = c.get("actor");
    return {
      burnOnLimit: body.delete !== false,
      ownerId: actor.kind === "principal" ? actor.principalId : null,
      allowedKeys: body.allowed_keys ? [...new Set(body.allowed_keys)] : null,
    };
  },
};

/**
 * PUT of one scope (docs/api.md "Replace a secret", docs/orgs.md
 * "Org-scoped secrets"): creates the secret (201 `{key}`) or replaces a live
 * one's value and limits in one unit of work (200 `{key, updated: true}`),
 * so a reader never finds the key missing in between. Needs `write` (scoped
 * keys, within their prefix) or the letter `c` (principal keys); a global
 * public id is never replaced (404). Order: 403, then 400/413, then 402/404.
 */
function replaceRouteOf<B extends typeof replaceSecretBody | typeof replaceOrgSecretBody>(
  deps: SecretRouteDeps,
  s: SecretScope,
  twin: ReplaceTwin<B>,
): Route {
  return route({
    method: "put",
    path: `${s.scope.base}/secrets/:key{.+}`,
    params: keyParams(twin.keyDoc),
    inPrefix: pathKeyInPrefix,
    summary: twin.summary,
    permission: s.permission.create,
    idempotent: true,
    body: twin.body,
    responses: {
      200: { description: "replaced: {key, updated: true}", schema: v.object({ key: v.string(), updated: v.literal(true) }) },
      201: { description: "created: {key}", schema: v.object({ key: v.string() }) },
      400: { description: twin.invalid },
      402: { description: "a create beyond the free tier limit of 100 active secrets (a replace is never refused for it)" },
      404: { description: twin.notFound },
      413: { description: "value larger than VAULT_MAX_VALUE_BYTES, or body over 1 MiB" },
    },
    handler: async (c, { params, body }) => {
      const key = params.key;
      checkValueSize(body.value, deps.maxValueBytes);
      twin.refuseKey(key);
      const origin = originOf(c);
      const extras = twin.extras(c, body);
      const replace = async (w: Work, scope: string): Promise<ReplaceOutcome> => {
        if (extras.allowedKeys) await deps.principalKeys.checkAllowedKeys(w, scope, extras.allowedKeys);
        const input: ReplaceInput = Object.assign({ scope, key, value: body.value, ttlSeconds: body.ttl_seconds, maxReads: body.max_reads }, extras);
        return deps.secrets.replace(w, input, origin);
      };
      const inUnit = <R,>(fn: (w: Work, scope: string) => Awaitable<R>): Promise<R> =>
        retryOnceOnConflict(() => deps.tx.run(async (w) => fn(w, await s.scope.scopeIn(w, c))));
      return answerOnce(c, deps.idempotency, inUnit, replace, (outcome) => (outcome.created ? [201, { key }] : [200, { key, updated: true as const }]), body);
    },
  });
}

/** The PUT route of a scope. */
export function replaceRoute(deps: SecretRouteDeps, s: SecretScope): Route {
  return byScope(s.scope, {
    global: () => replaceRouteOf(deps, s, GLOBAL_PUT),
    org: () => replaceRouteOf(deps, s, ORG_PUT),
  })();
}

/**
 * Runs a replace, and once more when it lost a create race (409: another
 * unit created the key after this one found it missing; on PostgreSQL the
 * unique index decides and aborts the transaction): the second run finds
 * the key and replaces it, so concurrent PUTs of a new key answer one 201
 * and 200s.
 */
async function retryOnceOnConflict<R>(run: () => Promise<R>): Promise<R> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof VaultError && err.kind === "conflict") return run();
    throw err;
  }
}
