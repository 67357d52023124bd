import * as v from "valibot";
import type { AppContext } from "../context.js";
import { keyPrefixOf } from "../auth.js";
import { ApiError } from "../errors.js";
import type { AuditEntry, AuditFilter, AuditLog } from "../../domain/audit/log.js";
import type { UnitOfWork, Work } from "../../store/work.js";
import { int } from "./answers.js";
import type { Route, RoutePermission } from "./declare.js";
import { route } from "./declare.js";
import { cursorParam, MAX_UNIX_SECONDS, queryInt } from "./input.js";
import { listBody, listSchema } from "./lists.js";
import type { RouteScope } from "./scope.js";
import { byScope, inScope, SCOPES } from "./scope.js";

/**
 * The query of `GET /audit` and `GET /orgs/:org_id/audit` (docs/audit.md
 * "Querying: `GET /audit`"): since (inclusive) and until (exclusive) in Unix
 * seconds, action, key, limit 1-1000 (default 100), cursor.
 */
export const auditQuery = v.object({
  since: v.optional(v.pipe(queryInt("since", 0, MAX_UNIX_SECONDS), v.description("Unix seconds, inclusive"))),
  until: v.optional(v.pipe(queryInt("until", 0, MAX_UNIX_SECONDS), v.description("Unix seconds, exclusive"))),
  action: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^[a-z][a-z_.]{0,63}$/, "action must be an action name such as secret.read"),
      v.description("only this action, e.g. secret.read"),
    ),
  ),
  key: v.optional(
    v.pipe(
      v.string(),
      v.minLength(1, "key must not be empty"),
      v.maxLength(256, "key must be at most 256 characters"),
      v.description("only entries whose key field is exactly this"),
    ),
  ),
  limit: v.optional(v.pipe(queryInt("limit", 1, 1000), v.description("integer 1-1000, default 100"))),
  cursor: cursorParam,
});

/** Default page size of audit queries (docs/audit.md). */
export const AUDIT_DEFAULT_LIMIT = 100;

/** An AuditLog filter from a validated audit query. */
function auditFilter(q: v.InferOutput<typeof auditQuery>): AuditFilter {
  return {
    since: q.since,
    until: q.until,
    action: q.action,
    key: q.key,
    limit: q.limit ?? AUDIT_DEFAULT_LIMIT,
    afterCursor: q.cursor,
  };
}

/**
 * One audit entry as the API shows it (docs/contract.md §11): `{id,
 * timestamp, action, key, ip}` and who acted: `actor` (master, a scoped key
 * id, or null) in the global log, `principal_id` in an org's.
 */
const entryFields = {
  id: v.string(),
  timestamp: int,
  action: v.string(),
  key: v.nullable(v.string()),
  ip: v.nullable(v.string()),
};
const globalEntrySchema = v.object({
  ...entryFields,
  actor: v.pipe(v.nullable(v.string()), v.description("master, a scoped key id, or null")),
  count: v.optional(
    v.pipe(
      int,
      v.description("auth.failed entries only: how many failed requests the entry stands for (repeated failures from one address are coalesced)"),
    ),
  ),
});
const orgEntrySchema = v.object({
  ...entryFields,
  principal_id: v.pipe(v.nullable(v.string()), v.description("null for the master key and background work")),
});

function globalEntry(e: AuditEntry) {
  const entry = { id: e.id, timestamp: e.timestamp, action: e.action, key: e.key, actor: e.actor, ip: e.ip };
  return e.action === "auth.failed" ? Object.assign(entry, { count: e.count }) : entry;
}

function orgEntry(e: AuditEntry) {
  return { id: e.id, timestamp: e.timestamp, action: e.action, key: e.key, principal_id: e.principal_id, ip: e.ip };
}

/** What the audit routes need, built by app.ts. */
export interface AuditRouteDeps {
  audit: AuditLog;
  tx: UnitOfWork<Work>;
}

/**
 * The prefix rule of the global log (docs/audit.md): a prefix-scoped admin
 * key sees only entries whose key lies in its prefix; asking for a `key`
 * outside it is 403 (after the query is validated).
 * @throws ApiError 403.
 */
function narrowToPrefix(c: AppContext, filter: AuditFilter): void {
  const prefix = keyPrefixOf(c);
  if (prefix === undefined) return;
  if (filter.key !== undefined && !filter.key.startsWith(prefix)) {
    throw new ApiError(403, "this key may read only audit entries within its prefix");
  }
  filter.keyPrefix = prefix;
}

/** What the twin audit routes differ by (docs/audit.md). */
interface AuditTwin {
  summary: string;
  permission: RoutePermission;
  auditAction: string | undefined;
  schema: v.GenericSchema;
  entry: (e: AuditEntry) => object;
}

const AUDIT_TWINS: Readonly<Record<RouteScope["name"], AuditTwin>> = {
  global: {
    summary: "Query the global audit log, newest first. A prefix-scoped admin key sees only entries whose key is in its prefix.",
    permission: "admin",
    auditAction: "audit.queried",
    schema: listSchema("entries", globalEntrySchema),
    entry: globalEntry,
  },
  org: {
    summary:
      "Query the org's audit log, newest first: its secret operations, principal key changes and denied requests, with the principal behind each.",
    permission: "org:a",
    auditAction: undefined,
    schema: listSchema("entries", orgEntrySchema),
    entry: orgEntry,
  },
};

/**
 * The audit routes of both scopes (docs/audit.md "Querying: `GET /audit`"),
 * one set of rules over two logs: GET /audit, the global log (master key or
 * an admin key, narrowed to a prefix-scoped key's prefix), and GET
 * /orgs/:org_id/audit [a], the org's log. Newest first; entries leave only
 * once committed (read through the unit of work, the org's existence checked
 * in the same one).
 */
export function auditRoutes(deps: AuditRouteDeps): Route[] {
  return SCOPES.map((scope) => {
    const twin = byScope(scope, AUDIT_TWINS);
    return route({
      method: "get",
      path: `${scope.base}/audit`,
      summary: twin.summary,
      permission: twin.permission,
      auditAction: twin.auditAction,
      query: auditQuery,
      responses: Object.assign(
        { 200: { description: "{entries, next_cursor?}", schema: twin.schema }, 400: { description: "invalid parameter or cursor" } },
        scope.missing,
      ),
      handler: async (c, { query }) => {
        const filter = auditFilter(query);
        narrowToPrefix(c, filter);
        const page = await inScope(deps.tx, scope, c, (w, scopeId) => deps.audit.query(w, scopeId, filter));
        return c.json(listBody("entries", page.entries.map(twin.entry), page.nextCursor));
      },
    });
  });
}
