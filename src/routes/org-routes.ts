import { Hono } from "hono";
import type { AppEnv } from "../context.js";
import type { AuditLog } from "../domain/audit.js";
import type { OrgDomain } from "../domain/org-domain.js";
import type { SecretLifecycle } from "../domain/secrets.js";
import type { GroupCommit } from "../group-commit.js";
import type { RouteDoc } from "../openapi.js";
import { meRouteDocs, meRoutes } from "./me.js";
import { orgAuditRouteDocs, orgAuditRoutes } from "./org-audit.js";
import { orgSecretRouteDocs, orgSecretRoutes } from "./org-secrets.js";
import { orgManagementRouteDocs, orgManagementRoutes } from "./orgs.js";
import { principalRouteDocs, principalRoutes } from "./principals.js";
import { roleRouteDocs, roleRoutes } from "./roles.js";

export interface OrgRoutesDeps extends OrgDomain {
  secrets: SecretLifecycle;
  tx: GroupCommit;
  audit: AuditLog;
  maxValueBytes: number;
}

/**
 * Every route of issue 4 (interface sections 2-5, decisions.md sections 2,
 * 4-6): organizations, roles, principals and their keys (master key), /me
 * (principal keys), org-scoped secrets and the org audit log (role letters).
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
  app.route("/", orgAuditRoutes({ audit: deps.audit, tx: deps.tx }));
  return app;
}

/** OpenAPI descriptions of the routes above. */
export const orgRouteDocs: RouteDoc[] = [
  ...orgManagementRouteDocs,
  ...roleRouteDocs,
  ...principalRouteDocs,
  ...meRouteDocs,
  ...orgSecretRouteDocs,
  ...orgAuditRouteDocs,
];
