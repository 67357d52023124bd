import * as v from "valibot";
import type { AppContext } from "../context.js";
import { keyPrefixOf } from "../auth.js";
import { ApiError } from "../errors.js";
import type { AuditEntry, AuditFilter, AuditLog } from "../../domain/audit.js";
import { GLOBAL_SCOPE } from "../../domain/secret-model.js";
import type { Awaitable, UnitOfWork, Work } from "../../store/work.js";
import { orgIdOf } from "../org-auth.js";
import type { RouteDecl } from "./declare.js";
import { MAX_UNIX_SECONDS, parse, queryInt } from "./input.js";
import { listBody } from "./lists.js";

/**
 * The query of `GET /audit` and `GET /orgs/:org_id/audit` (docs/contract.md
 * §2, §5 and §11): since (inclusive) and until (exclusive)
 * in Unix seconds, action, key, limit 1-1000 (default 100), cursor.
 */
export const auditQuery = v.object({
  since: v.optional(queryInt("since", 0, MAX_UNIX_SECONDS)),
  until: v.optional(queryInt("until", 0, MAX_UNIX_SECONDS)),
  action: v.optional(
    v.pipe(v.string(), v.regex(/^[a-z][a-z_.]{0,63}$/, "action must be an action name such as secret.read")),
  ),
  key: v.optional(
    v.pipe(v.string(), v.minLength(1, "key must not be empty"), v.maxLength(256, "key must be at most 256 characters")),
  ),
  limit: v.optional(queryInt("limit", 1, 1000)),
  cursor: v.optional(v.string()),
});

/** Default page size of audit queries (docs/contract.md §5). */
export const AUDIT_DEFAULT_LIMIT = 100;

/**
 * Validates an audit query string and turns it into an AuditLog filter.
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

/** The query parameters of the audit routes, for OpenAPI. */
const auditQueryDocs: Record<string, string> = {
  since: "Unix seconds, inclusive",
  until: "Unix seconds, exclusive",
  action: "only this action, e.g. secret.read",
  key: "only entries whose key field is exactly this",
  limit: "integer 1-1000, default 100",
  cursor: "next_cursor of the previous page",
};

/**
 * One audit entry as the API shows it (docs/contract.md §11): `{id,
 * timestamp, action, key, ip}` and who acted: `actor` (master, a scoped key
 * id, or null) in the global log, `principal_id` in an org's.
 */
const entryFields = {
  id: v.string(),
  timestamp: v.pipe(v.number(), v.integer()),
  action: v.string(),
  key: v.nullable(v.string()),
  ip: v.nullable(v.string()),
};
const globalEntrySchema = v.object({
  ...entryFields,
  actor: v.pipe(v.nullable(v.string()), v.description("master, a scoped key id, or null")),
  count: v.optional(
    v.pipe(
      v.number(),
      v.integer(),
      v.description("auth.failed entries only: how many failed requests the entry stands for (repeated failures from one address are coalesced)"),
    ),
  ),
});
const orgEntrySchema = v.object({
  ...entryFields,
  principal_id: v.pipe(v.nullable(v.string()), v.description("null for the master key and background work")),
});

/** An audit page, `{entries, next_cursor?}`. */
function pageSchema<S extends v.GenericSchema>(entry: S) {
  return v.object({ entries: v.array(entry), next_cursor: v.optional(v.string()) });
}

function globalEntry(e: AuditEntry) {
  const entry = { id: e.id, timestamp: e.timestamp, action: e.action, key: e.key, actor: e.actor, ip: e.ip };
  return e.action === "auth.failed" ? Object.assign(entry, { count: e.count }) : entry;
}

function orgEntry(e: AuditEntry) {
  return { id: e.id, timestamp: e.timestamp, action: e.action, key: e.key, principal_id: e.principal_id, ip: e.ip };
}

export interface AuditRouteDeps {
  audit: AuditLog;
  tx: UnitOfWork<Work>;
}

/**
 * The audit routes of both scopes (docs/contract.md
 * §2, §5 and §11), one set of rules over two logs:
 * - GET /audit: the global log (master key or an admin key). A prefix-scoped
 *   admin key sees only entries whose key lies in its prefix; asking for a
 *   `key` outside it is 403.
 * - GET /orgs/:org_id/audit [a]: the org's log.
 * Newest first; entries leave only once committed (read through the group commit).
 */
export function auditRouteDecls(deps: AuditRouteDeps): RouteDecl[] {
  // The org's existence is checked in the same transaction as the query.
  const query = (scopeOf: (w: Work, c: AppContext) => Awaitable<string>, c: AppContext, filter: AuditFilter) =>
    deps.tx.run(async (w) => deps.audit.query(w, await scopeOf(w, c), filter));
  const errors = { 400: { description: "invalid parameter or cursor" } };
  return [
    {
      method: "get",
      path: "/audit",
      summary:
        "Query the global audit log, newest first. A prefix-scoped admin key sees only entries whose key is in its prefix.",
      permission: "admin",
      auditAction: "audit.queried",
      query: auditQueryDocs,
      responses: { 200: { description: "{entries, next_cursor?}", schema: pageSchema(globalEntrySchema) }, ...errors },
      handler: async (c: AppContext) => {
        const filter = parseAuditQuery(c.req.query());
        const prefix = keyPrefixOf(c);
        if (prefix !== undefined) {
          if (filter.key !== undefined && !filter.key.startsWith(prefix)) {
            throw new ApiError(403, "this key may read only audit entries within its prefix");
          }
          filter.keyPrefix = prefix;
        }
        const page = await query(() => GLOBAL_SCOPE, c, filter);
        return c.json(listBody("entries", page.entries.map(globalEntry), page.nextCursor));
      },
    },
    {
      method: "get",
      path: "/orgs/:org_id/audit",
      summary:
        "Query the org's audit log, newest first: its secret operations, principal key changes and denied requests, with the principal behind each.",
      permission: "org:a",
      query: auditQueryDocs,
      responses: {
        200: { description: "{entries, next_cursor?}", schema: pageSchema(orgEntrySchema) },
        ...errors,
        404: { description: "no such organization" },
      },
      handler: async (c: AppContext) => {
        const filter = parseAuditQuery(c.req.query());
        const page = await query(orgIdOf, c, filter);
        return c.json(listBody("entries", page.entries.map(orgEntry), page.nextCursor));
      },
    },
  ];
}
