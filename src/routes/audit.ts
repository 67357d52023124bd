import { Hono } from "hono";
import * as v from "valibot";
import type { AppEnv } from "../context.js";
import { keyPrefixOf, need } from "../auth.js";
import { ApiError } from "../errors.js";
import type { AuditEntry, AuditFilter, AuditLog } from "../domain/audit.js";
import { GLOBAL_SCOPE } from "../domain/secrets.js";
import type { GroupCommit } from "../group-commit.js";
import type { RouteDoc } from "../openapi.js";
import { parse, queryInt } from "./input.js";
import { listBody, listSchema } from "./lists.js";
import { methodNotAllowed } from "./method.js";

/** Largest since/until accepted: 9999-12-31T23:59:59Z, Unix seconds. */
const MAX_TIMESTAMP = 253_402_300_799;

/**
 * The query of `GET /audit` and `GET /orgs/:org_id/audit` (interface section
 * 4, decisions.md sections 3 and 8): since (inclusive) and until (exclusive)
 * in Unix seconds, action, key, limit 1-1000 (default 100), cursor.
 */
export const auditQuery = v.object({
  since: v.optional(queryInt("since", 0, MAX_TIMESTAMP)),
  until: v.optional(queryInt("until", 0, MAX_TIMESTAMP)),
  action: v.optional(
    v.pipe(v.string(), v.regex(/^[a-z][a-z_.]{0,63}$/, "action must be an action name such as secret.read")),
  ),
  key: v.optional(
    v.pipe(v.string(), v.minLength(1, "key must not be empty"), v.maxLength(256, "key must be at most 256 characters")),
  ),
  limit: v.optional(queryInt("limit", 1, 1000)),
  cursor: v.optional(v.string()),
});

/** Default page size of audit queries (decisions.md section 3). */
export const AUDIT_DEFAULT_LIMIT = 100;

/**
 * Validates an audit query string and turns it into an AuditLog filter.
 * Shared by the global and the org audit routes.
 * @throws ApiError 400 for a bad parameter.
 */
export function parseAuditQuery(query: Record<string, string>): AuditFilter {
  const q = parse(auditQuery, query);
  return {
    since: q.since,
    until: q.until,
    action: q.action,
    key: q.key,
    limit: q.limit ?? AUDIT_DEFAULT_LIMIT,
    afterCursor: q.cursor,
  };
}

/** A global audit entry as the API shows it: `{id, timestamp, action, key, actor, ip}`. */
function globalEntry(e: AuditEntry) {
  return { id: e.id, timestamp: e.timestamp, action: e.action, key: e.key, actor: e.actor, ip: e.ip };
}

export interface AuditRouteDeps {
  audit: AuditLog;
  tx: GroupCommit;
}

/**
 * GET /audit: the global audit log, newest first (master key or an admin
 * key). A prefix-scoped admin key sees only entries whose key lies in its
 * prefix; asking for a `key` outside it is 403.
 */
export function auditRoutes(deps: AuditRouteDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get("/audit", need("admin"), async (c) => {
    const filter = parseAuditQuery(c.req.query());
    const prefix = keyPrefixOf(c);
    if (prefix !== undefined) {
      if (filter.key !== undefined && !filter.key.startsWith(prefix)) {
        throw new ApiError(403, "this key may read only audit entries within its prefix");
      }
      filter.keyPrefix = prefix;
    }
    // Through the group commit: entries leave only once they are committed.
    const page = await deps.tx.run(() => deps.audit.query(GLOBAL_SCOPE, filter));
    return c.json(listBody("entries", page.entries.map(globalEntry), page.nextCursor));
  });
  app.all("/audit", methodNotAllowed(["GET", "HEAD"]));
  return app;
}

/** The query parameters of audit routes, for OpenAPI. */
export const auditQueryDocs: Record<string, string> = {
  since: "Unix seconds, inclusive",
  until: "Unix seconds, exclusive",
  action: "only this action, e.g. secret.read",
  key: "only entries whose key field is exactly this",
  limit: "integer 1-1000, default 100",
  cursor: "next_cursor of the previous page",
};

/**
 * The OpenAPI schema of an audit page, `{entries, next_cursor?}`, for GET
 * /audit and GET /orgs/:org_id/audit: entries are `{id, timestamp, action,
 * key, <who>, ip}`, where `who` is `actor` in the global log and
 * `principal_id` in an org's (decisions.md section 8).
 * @param whoDescription what the `who` field holds, for the reader.
 */
export function auditPageSchema(who: "actor" | "principal_id", whoDescription: string) {
  return listSchema("entries", {
    type: "object",
    required: ["id", "timestamp", "action", "key", who, "ip"],
    properties: {
      id: { type: "string" },
      timestamp: { type: "integer" },
      action: { type: "string" },
      key: { type: ["string", "null"] },
      [who]: { type: ["string", "null"], description: whoDescription },
      ip: { type: ["string", "null"] },
    },
  });
}

/** OpenAPI description of the route above. */
export const auditRouteDocs: RouteDoc[] = [
  {
    method: "get",
    path: "/audit",
    summary:
      "Query the global audit log, newest first. A prefix-scoped admin key sees only entries whose key is in its prefix.",
    permission: "admin",
    query: auditQueryDocs,
    responses: {
      200: {
        description: "{entries, next_cursor?}",
        schema: auditPageSchema("actor", "master, a scoped key id, or null"),
      },
      400: "invalid parameter or cursor",
    },
  },
];
