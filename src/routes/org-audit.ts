import { Hono } from "hono";
import type { AppEnv } from "../context.js";
import type { AuditEntry, AuditLog } from "../domain/audit.js";
import type { GroupCommit } from "../group-commit.js";
import { needOrg, orgIdOf } from "../org-auth.js";
import type { RouteDoc } from "../openapi.js";
import { auditPageSchema, auditQueryDocs, parseAuditQuery } from "./audit.js";
import { listBody } from "./lists.js";
import { methodNotAllowed } from "./method.js";

export interface OrgAuditRouteDeps {
  audit: AuditLog;
  tx: GroupCommit;
}

/** An org audit entry as the API shows it: `{id, timestamp, action, key, principal_id, ip}` (decisions.md section 8). */
function orgEntry(e: AuditEntry) {
  return { id: e.id, timestamp: e.timestamp, action: e.action, key: e.key, principal_id: e.principal_id, ip: e.ip };
}

/**
 * GET /orgs/:org_id/audit [a] (interface section 4, decisions.md sections 3
 * and 8): the org's audit log, newest first; since (inclusive) and until
 * (exclusive) in Unix seconds, action, key, limit (default 100, max 1000),
 * cursor. The same query rules as GET /audit, over the org's scope.
 */
export function orgAuditRoutes(deps: OrgAuditRouteDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get("/orgs/:org_id/audit", needOrg("a"), async (c) => {
    const filter = parseAuditQuery(c.req.query());
    const orgId = orgIdOf(c);
    // Through the group commit: entries leave only once they are committed.
    const page = await deps.tx.run(() => deps.audit.query(orgId, filter));
    return c.json(listBody("entries", page.entries.map(orgEntry), page.nextCursor));
  });
  app.all("/orgs/:org_id/audit", methodNotAllowed(["GET", "HEAD"]));
  return app;
}

/** OpenAPI description of the route above. */
export const orgAuditRouteDocs: RouteDoc[] = [
  {
    method: "get",
    path: "/orgs/{org_id}/audit",
    summary:
      "Query the org's audit log, newest first: its secret operations, principal key changes and denied requests, with the principal behind each.",
    permission: "org:a",
    query: auditQueryDocs,
    responses: {
      200: {
        description: "{entries, next_cursor?}",
        schema: auditPageSchema("principal_id", "null for the master key and background work"),
      },
      400: "invalid parameter or cursor",
      404: "no such organization",
    },
  },
];
