import { Hono } from "hono";
import type { AppEnv } from "../context.js";
import type { OrgDomain } from "../domain/org-domain.js";
import type { SecretLifecycle } from "../domain/secrets.js";
import type { GroupCommit } from "../group-commit.js";
import type { RouteDoc } from "../openapi.js";
import { meRouteDocs, meRoutes } from "./me.js";
import { orgSecretRouteDocs, orgSecretRoutes } from "./org-secrets.js";
import { orgManagementRouteDocs, orgManagementRoutes } from "./orgs.js";
import { principalRouteDocs, principalRoutes } from "./principals.js";
import { roleRouteDocs, roleRoutes } from "./roles.js";

export interface OrgRoutesDeps extends OrgDomain {
  secrets: SecretLifecycle;
  tx: GroupCommit;
  maxValueBytes: number;
}

/**
 * Every route of issue 4 (interface sections 2-5, decisions.md sections 2,
 * 4-6): organizations, roles, principals and their keys (master key), /me
 * (principal keys) and org-scoped secrets (role letters); the org audit log
 * is mounted with the global one (routes/audit.ts).
 */
export function orgRoutes(deps: OrgRoutesDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.route("/", orgManagementRoutes({ orgs: deps.orgs, tx: deps.tx }));
  app.route("/", roleRoutes({ roles: deps.roles, tx: deps.tx }));
  app.route("/", principalRoutes({ principals: deps.principals, keys: deps.keys, tx: deps.tx }));
  app.route("/", meRoutes({ principals: deps.principals, keys: deps.keys, tx: deps.tx }));
  app.route(
    "/",
    orgSecretRoutes({ secrets: deps.secrets, keys: deps.keys, tx: deps.tx, maxValueBytes: deps.maxValueBytes }),
  );
  return app;
}

/** OpenAPI descriptions of the routes above. */
export const orgRouteDocs: RouteDoc[] = [
  ...orgManagementRouteDocs,
  ...roleRouteDocs,
  ...principalRouteDocs,
  ...meRouteDocs,
  ...orgSecretRouteDocs,
];
