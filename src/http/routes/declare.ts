import { toJsonSchema } from "@valibot/to-json-schema";
import type { Handler, Hono } from "hono";
import type * as v from "valibot";
import { need } from "../auth.js";
import type { RouteCheck } from "../auth.js";
import type { AppEnv } from "../context.js";
import type { Permission } from "../../domain/permissions.js";
import type { OrgLetter } from "../../domain/permissions.js";
import type { JsonSchema, RouteDoc } from "../openapi.js";
import { needMaster, needMetricsReader, needOrg, needPrincipal } from "../org-auth.js";
import { methodNotAllowed } from "./method.js";

/**
 * Who may call a route (docs/contract.md §8): "none" (no token), a scoped
 * key permission (global routes; the master key holds all), "master",
 * "principal" (/me: principal keys only), or "org:<letter>" (the master key,
 * or a principal key of the org whose role grants the letter).
 */
export type RoutePermission = "none" | Permission | "master" | "principal" | "metrics" | `org:${OrgLetter}`;

/** One documented response: a description and its body's schema (valibot, or JSON Schema). */
export interface ResponseDecl {
  description: string;
  schema?: v.GenericSchema | JsonSchema;
  /** The body's media type; default `application/json` (every answer but GET /metrics). */
  contentType?: string;
}

/**
 * A route, declared once: the chain mounted on the app (permission check,
 * then the handler) and its OpenAPI operation are both derived from it.
 */
export interface RouteDecl {
  method: "get" | "post" | "put" | "patch" | "delete";
  /** Hono path: `/orgs/:org_id/audit`, `/secrets/:key{.+}`. */
  path: string;
  summary: string;
  permission: RoutePermission;
  /**
   * The audit action a scoped-key request records when the handler records
   * none (docs/contract.md §11), e.g. `secret.listed`; default `request`.
   */
  auditAction?: string;
  /** The valibot schema the handler validates its JSON body with. */
  body?: v.GenericSchema;
  /** Query parameters and their description. */
  query?: Record<string, string>;
  /** Path parameters and their description (undescribed ones are documented as plain strings). */
  params?: Record<string, string>;
  /** Status -> response; 401, 403 and 429 are added for routes that need a token. */
  responses: Record<number, ResponseDecl>;
  handler: Handler<AppEnv>;
}

/**
 * The permission check of a route, built once at startup.
 * @throws ApiError 403 (from the check) when the caller may not.
 */
function checkFor(permission: Exclude<RoutePermission, "none">, auditAction: string | undefined): RouteCheck {
  // Scoped keys reach only the global routes: need() carries their audit action.
  if (permission === "master") return needMaster();
  if (permission === "principal") return needPrincipal();
  if (permission === "metrics") return needMetricsReader;
  if (permission.startsWith("org:")) return needOrg(permission.slice(4) as OrgLetter);
  return need(permission as Permission, auditAction);
}

/** The order of methods in `Allow` headers. */
const ALLOW_ORDER = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"];

/**
 * Mounts declarations on `app`: each route gets its permission check (with
 * its audit action put on the context, for the access guard) and its
 * handler; each path gets a last handler answering other methods 405 with
 * `Allow` listing the declared methods, GET implying HEAD (docs/contract.md
 * §14). Every middleware is built here, once, not per request.
 */
export function mount(app: Hono<AppEnv>, decls: readonly RouteDecl[]): void {
  const methods = new Map<string, string[]>();
  for (const d of decls) {
    const list = methods.get(d.path) ?? [];
    list.push(d.method.toUpperCase());
    if (d.method === "get") list.push("HEAD");
    methods.set(d.path, list);
    if (d.permission === "none") {
      app.on(d.method.toUpperCase(), d.path, d.handler);
      continue;
    }
    // The check runs in the handler's own call: no extra middleware layer per request.
    const check = checkFor(d.permission, d.auditAction);
    const handler = d.handler;
    app.on(d.method.toUpperCase(), d.path, (c, next) => {
      check(c);
      return handler(c, next);
    });
  }
  for (const [path, allowed] of methods) {
    app.all(path, methodNotAllowed(allowed.sort((a, b) => ALLOW_ORDER.indexOf(a) - ALLOW_ORDER.indexOf(b))));
  }
}

/** `/orgs/:org_id/secrets/:key{.+}` -> `/orgs/{org_id}/secrets/{key}`. */
export function openApiPath(path: string): string {
  return path.replace(/:(\w+)(\{[^}]*\})?/g, "{$1}");
}

/** A response schema as JSON Schema, without the draft-07 `$schema` tag (OpenAPI 3.1 is 2020-12). */
function jsonSchemaOf(schema: v.GenericSchema | JsonSchema): JsonSchema {
  if (!("~standard" in schema)) return schema;
  const { $schema: _dialect, ...rest } = toJsonSchema(schema as v.GenericSchema, { errorMode: "ignore" }) as JsonSchema;
  return rest;
}

/** The OpenAPI descriptions (openapi.ts RouteDoc) of declarations; valibot schemas become JSON Schema. */
export function routeDocs(decls: readonly RouteDecl[]): RouteDoc[] {
  return decls.map((d) => {
    const responses: RouteDoc["responses"] = {};
    for (const [status, r] of Object.entries(d.responses)) {
      responses[Number(status)] =
        r.schema === undefined
          ? r.description
          : { description: r.description, schema: jsonSchemaOf(r.schema), ...(r.contentType === undefined ? {} : { contentType: r.contentType }) };
    }
    const doc: RouteDoc = { method: d.method, path: openApiPath(d.path), summary: d.summary, permission: d.permission, responses };
    if (d.body !== undefined) doc.body = d.body;
    if (d.query !== undefined) doc.query = d.query;
    if (d.params !== undefined) doc.params = d.params;
    return doc;
  });
}
