import type { AppContext } from "../context.js";
import { orgIdOf } from "../org-auth.js";
import { GLOBAL_SCOPE } from "../../domain/secrets/model.js";
import { andThen } from "../../store/work.js";
import type { Awaitable, UnitOfWork, Work } from "../../store/work.js";
import type { ResponseDecl } from "./declare.js";

/**
 * Where a route lives: the global space or an organization's. Secrets,
 * webhooks and the audit log have twin routes, one per scope
 * (docs/orgs.md "Org-scoped secrets", docs/webhooks.md, docs/audit.md):
 * each family builds its routes once per descriptor of SCOPES, and what
 * differs between the twins is read from the descriptor (or from a
 * `{global, org}` pair picked by its name), never from a flag.
 */
export interface RouteScope {
  readonly name: "global" | "org";
  /** The start of the scope's paths: `` (global) or `/orgs/:org_id`. */
  readonly base: string;
  /**
   * The org of the request, inside unit of work `w`: null for the global
   * scope; for an org route the path's `:org_id`, checked to exist in the
   * same transaction (org-auth.ts orgIdOf: 404), so call it after the input
   * is validated (400 before 404).
   */
  orgIn(w: Work, c: AppContext): Awaitable<string | null>;
  /** The scope id of stores keyed by scope (secrets, audit): GLOBAL_SCOPE, or the org id. */
  scopeIn(w: Work, c: AppContext): Awaitable<string>;
  /** Responses only this scope adds: an org route's 404 for an unknown org. */
  readonly missing: Readonly<Record<number, ResponseDecl>>;
}

/** The global scope: scoped keys and the master key. */
export const GLOBAL: RouteScope = {
  name: "global",
  base: "",
  orgIn: () => null,
  scopeIn: () => GLOBAL_SCOPE,
  missing: {},
};

/** An organization's scope: the master key and the org's principal keys. */
export const ORG: RouteScope = {
  name: "org",
  base: "/orgs/:org_id",
  orgIn: orgIdOf,
  scopeIn: orgIdOf,
  missing: { 404: { description: "no such organization" } },
};

/** Both scopes, global first: the order of the twins in the document. */
export const SCOPES: readonly RouteScope[] = [GLOBAL, ORG];

/** The value of `scope` in a pair of per-scope values (a summary, a schema, a permission). */
export function byScope<P extends { readonly global: unknown; readonly org: unknown }>(scope: RouteScope, pair: P): P["global"] | P["org"] {
  return pair[scope.name];
}

/** Runs `fn` in a unit of work with the request's scope id (RouteScope.scopeIn: 404 for an unknown org). */
export function inScope<T>(tx: UnitOfWork<Work>, scope: RouteScope, c: AppContext, fn: (w: Work, scopeId: string) => Awaitable<T>): Promise<T> {
  return tx.run((w) => {
    // The global scope answers at once: no extra await in the unit.
    return andThen(scope.scopeIn(w, c), (id) => fn(w, id));
  });
}
