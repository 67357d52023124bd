import type { AppContext } from "./context.js";
import { ApiError } from "./errors.js";
import { GRANTING_LETTERS, roleGrants } from "../domain/permissions.js";
import type { OrgLetter } from "../domain/permissions.js";
import type { RouteCheck } from "./auth.js";
import type { Work } from "../store/work.js";

/**
 * Authorization of org routes, built from each route's declared permission
 * (`org:l` -> needOrg("l"), routes/declare.ts), per
 * docs/contract.md §8:
 *
 * - the master key passes for any org id (whether the org exists is checked
 *   later by orgIdOf(), after input validation: 403 before 400 before 404);
 * - a principal key passes only on its own org's path and only when its role
 *   grants `letter` (the role's letters are resolved on every request, so a
 *   role change takes effect at once); on another org's path it gets 403,
 *   whether or not that org exists;
 * - a scoped API key gets 403.
 *
 * The route must have an `:org_id` path parameter.
 * @throws ApiError 403.
 */
export function needOrg(letter: OrgLetter): RouteCheck {
  return (c) => {
    const actor = c.get("actor");
    if (actor.kind === "master") return;
    if (actor.kind !== "principal") {
      throw new ApiError(403, actor.kind === "scoped" ? "scoped API keys may not use organization endpoints" : "this token may not use organization endpoints");
    }
    if (c.req.param("org_id") !== actor.orgId) throw new ApiError(403, "this key belongs to another organization");
    if (!roleGrants(actor.letters, letter)) {
      throw new ApiError(403, `this key's role lacks the ${letter} permission`, {
        message: `the ${letter} letter grants ${GRANTING_LETTERS[letter]}`,
      });
    }
  };
}

/**
 * Organization, principal and role management: the master key only
 * (docs/contract.md §8).
 * @throws ApiError 403 for any other token.
 */
export function needMaster(): RouteCheck {
  return (c) => {
    if (c.get("actor").kind !== "master") throw new ApiError(403, "this endpoint requires the master key");
  };
}

/**
 * GET /metrics: the master key or VAULT_METRICS_TOKEN.
 * @throws ApiError 403 for scoped and principal keys.
 */
export const needMetricsReader: RouteCheck = (c) => {
  const kind = c.get("actor").kind;
  if (kind !== "master" && kind !== "metrics") throw new ApiError(403, "/metrics needs the master key or VAULT_METRICS_TOKEN");
};

/**
 * `/me*`: principal keys only (docs/contract.md §8).
 * @throws ApiError 403 for the master key or a scoped API key.
 */
export function needPrincipal(): RouteCheck {
  return (c) => {
    if (c.get("actor").kind !== "principal") throw new ApiError(403, "this endpoint requires a principal key");
  };
}

/**
 * The org id of an org route (its `:org_id` path parameter), checked to
 * exist. Call it inside the handler's unit of work, with its handle (the
 * org could otherwise go before the work that uses it),
 * after reading and validating the input, so that a bad body gives 400
 * before an unknown org gives 404 (docs/contract.md §8). Authorization
 * (needOrg / needMaster) has run before.
 * @returns the org id.
 * @throws ApiError 404 when no such org exists.
 */
export async function orgIdOf(w: Work, c: AppContext): Promise<string> {
  const orgId = c.req.param("org_id") ?? "";
  if ((await w.orgs.byId(orgId)) === undefined) throw new ApiError(404, "organization not found");
  return orgId;
}
