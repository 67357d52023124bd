import { Hono } from "hono";
import type { AppEnv } from "../context.js";
import type { OrgDomain } from "../domain/org-domain.js";
import type { GroupCommit } from "../group-commit.js";
import type { RouteDoc } from "../openapi.js";
import { meRouteDocs, meRoutes } from "./me.js";
import { orgManagementRouteDocs, orgManagementRoutes } from "./orgs.js";
import { principalRouteDocs, principalRoutes } from "./principals.js";
import { roleRouteDocs, roleRoutes } from "./roles.js";

export interface OrgRoutesDeps extends OrgDomain {
  tx: GroupCommit;
}

/**
 * Every route of issue 4 (interface sections 2-5, decisions.md sections 2,
 * 4-6): organizations, roles, principals and their keys (master key), /me
 * (principal keys). Org-scoped secrets and the org audit log are mounted
 * with the global ones (routes/secrets.ts, routes/audit.ts).
 */
export function orgRoutes(deps: OrgRoutesDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.route("/", orgManagementRoutes({ orgs: deps.orgs, tx: deps.tx }));
  app.route("/", roleRoutes({ roles: deps.roles, tx: deps.tx }));
  app.route("/", principalRoutes({ principals: deps.principals, keys: deps.keys, tx: deps.tx }));
  app.route("/", meRoutes({ principals: deps.principals, keys: deps.keys, tx: deps.tx }));
  return app;
}

/** OpenAPI descriptions of the routes above. */
export const orgRouteDocs: RouteDoc[] = [
  ...orgManagementRouteDocs,
  ...roleRouteDocs,
  ...principalRouteDocs,
  ...meRouteDocs,
];
