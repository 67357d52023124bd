import type { Hono } from "hono";
import type * as v from "valibot";
import { need, requireInPrefix } from "../auth.js";
import type { RouteCheck } from "../auth.js";
import type { AppContext, AppEnv } from "../context.js";
import type { Permission } from "../../domain/permissions.js";
import type { OrgLetter } from "../../domain/permissions.js";
import { needMaster, needMetricsReader, needOrg, needPrincipal } from "../org-auth.js";
import { parse, readJsonObject, withoutNulls } from "./input.js";
import { methodNotAllowed } from "./method.js";

/**
 * Who may call a route (docs/architecture.md "Where each rule lives"):
 * "none" (no token), a scoped key permission (global routes; the master key
 * holds all), "master", "principal" (/me: principal keys only), "metrics"
 * (the master key or VAULT_METRICS_TOKEN), or "org:<letter>" (the master
 * key, or a principal key of the org whose role grants the letter).
 */
export type RoutePermission = "none" | Permission | "master" | "principal" | "metrics" | `org:${OrgLetter}`;

/** One documented response: a description and its body's valibot schema (none: a JSON object of no declared shape, or the error shape for 4xx/5xx). */
export interface ResponseDecl {
  description: string;
  schema?: v.GenericSchema;
  /** The body's media type; default `application/json` (every answer but GET /metrics). */
  contentType?: string;
}

/**
 * The path or query parameters of a route: a valibot object of string
 * schemas (what a URL carries), each entry's description documenting it.
 */
export type ParamsSchema = v.ObjectSchema<v.ObjectEntries, undefined>;

/** What a schema gives the handler: its output, or undefined when the route declares none. */
type Output<S> = S extends v.GenericSchema ? v.InferOutput<S> : undefined;

/** The validated input a handler receives, typed from its declaration's schemas. */
export interface RouteInput<P, Q, B> {
  params: Output<P>;
  query: Output<Q>;
  body: Output<B>;
}

/**
 * Prefix scoping of the secret a route names (auth.ts requireInPrefix, for
 * prefix-scoped keys), checked on the raw input before it is validated, so
 * the answer is 403 before 400 (docs/keys.md).
 */
export interface PrefixRule {
  /** Where the route names its secret: the path parameters, or the JSON body (read first: 400/413 for a body that is no JSON object). */
  from: "params" | "body";
  /** The key in the raw input; null: a public secret (never within a prefix); undefined: no key to check (left to validation). */
  key: (raw: Readonly<Record<string, unknown>>) => string | null | undefined;
}

/**
 * A route, declared once (docs/architecture.md): the chain mounted on the
 * app (permission check, prefix rule, input validation, handler) and its
 * OpenAPI operation (openapi.ts) are both derived from it.
 */
export interface RouteDecl<P extends ParamsSchema | undefined = undefined, Q extends ParamsSchema | undefined = undefined, B extends v.GenericSchema | undefined = undefined> {
  method: "get" | "post" | "put" | "patch" | "delete";
  /** Hono path: `/orgs/:org_id/audit`, `/secrets/:key{.+}`. */
  path: string;
  summary: string;
  permission: RoutePermission;
  /**
   * The audit action a scoped-key request records when the handler records
   * none (docs/audit.md), e.g. `secret.listed`; default `request`.
   */
  auditAction?: string;
  inPrefix?: PrefixRule;
  /** Path parameters (percent-decoded); undeclared ones are documented as plain strings and not validated. */
  params?: P;
  query?: Q;
  /** The JSON body: read by input.ts readJsonObject (type, size, depth), then validated. */
  body?: B;
  /** Status -> response; 401, 403 and 429 are added for routes that need a token. */
  responses: Record<number, ResponseDecl>;
  handler: (c: AppContext, input: RouteInput<P, Q, B>) => Response | Promise<Response>;
}

/** A declaration made mountable by route(): its schemas, for the document, and `handle`, its input checks and handler. */
export interface Route extends Omit<RouteDecl, "params" | "query" | "body" | "handler"> {
  params?: ParamsSchema | undefined;
  query?: ParamsSchema | undefined;
  body?: v.GenericSchema | undefined;
  /** After the permission check: the prefix rule, params, query, then body (400/413), then the handler. */
  handle: (c: AppContext) => Response | Promise<Response>;
}

/** Validates `raw` with `schema` when the route declares one (parse(): 400). */
function parsed<S extends v.GenericSchema | undefined>(schema: S | undefined, raw: () => unknown): Output<S> {
  // Output<S> of an undeclared schema is undefined: the one place the two meet.
  return (schema === undefined ? undefined : parse(schema, raw())) as Output<S>;
}

/**
 * Makes a declaration mountable: its handler behind the checks of its input,
 * in the order the API answers them (docs/api.md, its conventions): the prefix rule
 * on a path key, the path parameters, the query, then the body (read:
 * 400/413; a prefix rule on the body's key; validated: 400). A route without
 * a body never reads one.
 */
export function route<P extends ParamsSchema | undefined = undefined, Q extends ParamsSchema | undefined = undefined, B extends v.GenericSchema | undefined = undefined>(
  decl: RouteDecl<P, Q, B>,
): Route {
  const { params, query, body, inPrefix, handler } = decl;
  const head = (c: AppContext): { params: Output<P>; query: Output<Q> } => {
    if (inPrefix?.from === "params") requireInPrefixOf(c, inPrefix, c.req.param());
    return { params: parsed(params, () => c.req.param()), query: parsed(query, () => c.req.query()) };
  };
  const handle =
    body === undefined
      ? (c: AppContext) => {
          const { params: p, query: q } = head(c);
          return handler(c, { params: p, query: q, body: parsed(body, () => undefined) });
        }
      : async (c: AppContext) => {
          const { params: p, query: q } = head(c);
          const raw = withoutNulls(await readJsonObject(c));
          if (inPrefix?.from === "body") requireInPrefixOf(c, inPrefix, raw);
          return handler(c, { params: p, query: q, body: parsed(body, () => raw) });
        };
  return Object.assign(
    { method: decl.method, path: decl.path, summary: decl.summary, permission: decl.permission, responses: decl.responses },
    { auditAction: decl.auditAction, inPrefix, params, query, body, handle },
  );
}

/** Applies a prefix rule to the raw input. @throws ApiError 403 outside the caller's prefix. */
function requireInPrefixOf(c: AppContext, rule: PrefixRule, raw: Readonly<Record<string, unknown>>): void {
  const key = rule.key(raw);
  if (key !== undefined) requireInPrefix(c, key);
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
 * Mounts routes on `app`: each gets its permission check (401 came before,
 * in front.ts; 403 here, with its audit action put on the context for the
 * access guard), then `handle` (input checks, 400/413, then the handler);
 * each path gets a last handler answering other methods 405 with `Allow`
 * listing the declared methods, GET implying HEAD (docs/api.md, its conventions).
 * Every middleware is built here, once, not per request.
 */
export function mount(app: Hono<AppEnv>, routes: readonly Route[]): void {
  const methods = new Map<string, string[]>();
  for (const r of routes) {
    const list = methods.get(r.path) ?? [];
    list.push(r.method.toUpperCase());
    if (r.method === "get") list.push("HEAD");
    methods.set(r.path, list);
    const handle = r.handle;
    if (r.permission === "none") {
      app.on(r.method.toUpperCase(), r.path, (c) => handle(c));
      continue;
    }
    // The check runs in the handler's own call: no extra middleware layer per request.
    const check = checkFor(r.permission, r.auditAction);
    app.on(r.method.toUpperCase(), r.path, (c) => {
      check(c);
      return handle(c);
    });
  }
  for (const [path, allowed] of methods) {
    app.all(path, methodNotAllowed(allowed.sort((a, b) => ALLOW_ORDER.indexOf(a) - ALLOW_ORDER.indexOf(b))));
  }
}
