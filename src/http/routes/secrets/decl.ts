import type { AppContext } from "../../context.js";
import type { Origin } from "../../../domain/events.js";
import type { Awaitable } from "../../../model/awaitable.js";
import type { Work } from "../../../store/work.js";
import type * as v from "valibot";
import type { ParamsSchema, Route, RouteDecl } from "../declare.js";
import { route } from "../declare.js";
import { byScope, inScope } from "../scope.js";
import { keyParams, pathKeyInPrefix } from "../secret-input.js";
import type { SecretRouteDeps, SecretScope } from "./rules.js";
import { afterRefusal } from "./rules.js";

/**
 * What the global and org secret routes share (docs/api.md "Global
 * secrets", docs/orgs.md "Org-scoped secrets"): the head of a declaration
 * under the scope's base path, and the work of a request that a refusal
 * may end.
 */

/** The summary of a route in each scope. */
export interface ScopeSummaries {
  global: string;
  org: string;
}

/** The members of a secret route's declaration besides those the helpers below fill in. */
type RestOf<P extends ParamsSchema | undefined, Q extends ParamsSchema | undefined, B extends v.GenericSchema | undefined> = Omit<
  RouteDecl<P, Q, B>,
  "method" | "path" | "summary" | "params" | "inPrefix"
>;

/**
 * A secret route at `tail` under the scope's base path (e.g. `/prune`),
 * with the scope's summary; `rest` gives the other members.
 */
export function scopedRoute<Q extends ParamsSchema | undefined = undefined>(
  s: SecretScope,
  method: RouteDecl["method"],
  tail: string,
  summaries: ScopeSummaries,
  rest: RestOf<undefined, Q, undefined>,
): Route {
  return route<undefined, Q, undefined>(Object.assign({ method, path: `${s.scope.base}${tail}`, summary: byScope(s.scope, summaries) }, rest));
}

type KeyParams = ReturnType<typeof keyParams>;

/**
 * A route on one secret, `/secrets/:key{.+}` under the scope's base path:
 * its key parameter and the key-prefix rule on it, the scope's summary;
 * `rest` gives the other members.
 */
export function secretKeyRoute<B extends v.GenericSchema | undefined = undefined>(
  s: SecretScope,
  method: RouteDecl["method"],
  summaries: ScopeSummaries,
  rest: RestOf<KeyParams, undefined, B>,
): Route {
  const head = { method, path: `${s.scope.base}/secrets/:key{.+}`, summary: byScope(s.scope, summaries), params: keyParams(s.keyDoc), inPrefix: pathKeyInPrefix };
  return route<KeyParams, undefined, B>(Object.assign(head, rest));
}

/**
 * Runs `fn` in the request's scope (scope.ts inScope); a refusal it throws
 * is recorded by rules.ts afterRefusal, then thrown again.
 * @returns what `fn` returns.
 * @throws what afterRefusal makes of the error (the ApiError answer).
 */
export async function refusable<T>(deps: SecretRouteDeps, s: SecretScope, c: AppContext, origin: Origin, fn: (w: Work, scopeId: string) => Awaitable<T>): Promise<T> {
  try {
    // A try block costs the successful request nothing; only a refusal takes the catch.
    return await inScope(deps.tx, s.scope, c, fn);
  } catch (err) {
    throw await afterRefusal(deps, err, origin);
  }
}
