import type { IncomingMessage } from "node:http";
import { Readable } from "node:stream";
import type { Context, Hono, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { LargeBodyQueue } from "./large-body-queue.js";
import * as v from "valibot";
import { need, requestHeader, requireInPrefix } from "../auth.js";
import type { RouteCheck } from "../auth.js";
import type { AppContext, AppEnv } from "../context.js";
import type { Permission } from "../../domain/permissions.js";
import type { OrgLetter } from "../../domain/permissions.js";
import { ApiError } from "../errors.js";
import { needMaster, needMetricsReader, needOrg, needPrincipal } from "../org-auth.js";

/**
 * The route declaration kit (docs/architecture.md "Where each rule lives"):
 * a route declared once (route()), mounted with its permission check and
 * the 405 of its path (mount()), and the generic input checks it runs on
 * every request: the JSON body (size, type, UTF-8, nesting depth, lone
 * surrogates, readJsonObject) and valibot validation (parse()).
 */

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
  /** Takes an `Idempotency-Key` (docs/api.md, "Retries"): the document names the header and its 422. */
  idempotent?: true | undefined;
  /** Path parameters (percent-decoded); undeclared ones are documented as plain strings and not validated. */
  params?: P;
  query?: Q;
  /** The JSON body: read by readJsonObject (type, size, depth), then validated. */
  body?: B;
  /** A body over MAX_BODY_BYTES this route admits (a file's create); without it, 1 MiB is the limit. */
  largeBody?: LargeBody | undefined;
  /** Status -> response; 401, 403 and 429 are added for routes that need a token. */
  responses: Record<number, ResponseDecl>;
  handler: (c: AppContext, input: RouteInput<P, Q, B>) => Response | Promise<Response>;
}

/**
 * A body larger than MAX_BODY_BYTES that a route admits (docs/share.md,
 * "Files"): read up to `maxBytes`; a body over MAX_BODY_BYTES must then
 * pass `admits` (the raw object, before validation), else 413 `message`.
 */
export interface LargeBody {
  /** Largest body read, bytes. */
  maxBytes: number;
  /** Whether a body over MAX_BODY_BYTES is one this allowance is for. */
  admits: (raw: Readonly<Record<string, unknown>>) => boolean;
  /** The 413's message, naming both limits. */
  message: string;
  /**
   * Where a body over MAX_BODY_BYTES waits, once read, for its turn: one at
   * a time from parsing to the handler's answer (LargeBodyQueue).
   */
  queue: LargeBodyQueue;
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
  const { params, query, body, inPrefix, handler, largeBody } = decl;
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
          const bytes = await readJsonBytes(c, largeBody);
          // A large body (a file's create) is parsed and checked in its turn, one at a time (LargeBodyQueue).
          const release = largeBody !== undefined && bytes.length > MAX_BODY_BYTES ? await largeBody.queue.acquire() : undefined;
          let input: RouteInput<P, Q, B>;
          try {
            const raw = withoutNulls(parseJsonObject(bytes));
            if (largeBody !== undefined && bytes.length > MAX_BODY_BYTES && !largeBody.admits(raw)) throw tooLarge(largeBody.message);
            if (inPrefix?.from === "body") requireInPrefixOf(c, inPrefix, raw);
            input = { params: p, query: q, body: parsed(body, () => raw) };
          } finally {
            release?.();
          }
          return handler(c, input);
        };
  return Object.assign(
    { method: decl.method, path: decl.path, summary: decl.summary, permission: decl.permission, responses: decl.responses },
    { auditAction: decl.auditAction, idempotent: decl.idempotent, inPrefix, params, query, body, largeBody, handle },
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

/**
 * The last handler of a path: a method not handled before it gets 405
 * with `Allow` (docs/contract.md §14).
 * @throws ApiError 405.
 */
export function methodNotAllowed(allowed: string[]): MiddlewareHandler {
  const allow = allowed.join(", ");
  return () => {
    throw new ApiError(405, "method not allowed", { headers: { Allow: allow } });
  };
}

const JSON_TYPE = /^application\/json\s*(;.*)?$/i;
const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Largest request body, bytes (docs/contract.md §5): larger gives 413. */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * The body limit, applied when a handler reads its body, that is after the
 * route's authorization: 401, then 403, then 413 (docs/contract.md §8).
 * A declared Content-Length over the limit is refused before reading; a
 * chunked body is counted as it arrives.
 */
const limitBody = bodyLimit({
  maxSize: MAX_BODY_BYTES,
  onError: () => {
    throw tooLarge();
  },
});

/** The body limiters of large-body routes (LargeBody), one per limit. */
const largeLimiters = new Map<number, ReturnType<typeof bodyLimit>>();
function limiterOf(large: LargeBody | undefined): ReturnType<typeof bodyLimit> {
  if (large === undefined) return limitBody;
  let found = largeLimiters.get(large.maxBytes);
  if (found === undefined) {
    found = bodyLimit({
      maxSize: large.maxBytes,
      onError: () => {
        throw tooLarge(large.message);
      },
    });
    largeLimiters.set(large.maxBytes, found);
  }
  return found;
}

/** The 413 of a body over its limit (MAX_BODY_BYTES unless a LargeBody says); the rest is not read, so the connection closes. */
function tooLarge(message = `the body may be at most ${MAX_BODY_BYTES} bytes`): ApiError {
  return new ApiError(413, "request body too large", { message, headers: { Connection: "close" } });
}

/**
 * The raw body, at most MAX_BODY_BYTES (413 beyond). On the Node server it
 * is read straight from the IncomingMessage, which the adapter hands over as
 * `c.env.incoming`: building a web Request and its stream for a small JSON
 * body costs more than the rest of a create. Elsewhere (in-process
 * `app.request()` in tests), or when something already touched the stream,
 * through Hono's bodyLimit and the Request.
 * `large`: a route's larger allowance (LargeBody.maxBytes).
 * @throws ApiError 413, or 400 when the client breaks off the body.
 */
async function readBodyBytes(c: Context, large?: LargeBody): Promise<Uint8Array> {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (incoming instanceof Readable && incoming.readableFlowing === null && !incoming.readableDidRead) {
    return readIncoming(incoming, large);
  }
  await limiterOf(large)(c, async () => {});
  return new Uint8Array(await c.req.arrayBuffer());
}

function readIncoming(incoming: IncomingMessage, large: LargeBody | undefined): Promise<Buffer> {
  const max = large?.maxBytes ?? MAX_BODY_BYTES;
  const refusal = () => (large === undefined ? tooLarge() : tooLarge(large.message));
  const declared = Number(incoming.headers["content-length"]);
  if (declared > max) return Promise.reject(refusal());
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => {
      incoming.off("data", onData).off("end", onEnd).off("error", onFail).off("close", onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        done();
        incoming.pause();
        reject(refusal());
      } else {
        chunks.push(chunk);
      }
    };
    const onEnd = () => {
      done();
      resolve(Buffer.concat(chunks, size));
    };
    const onFail = () => {
      done();
      reject(new ApiError(400, "the request body could not be read"));
    };
    const onClose = () => {
      if (!incoming.readableEnded) onFail();
    };
    incoming.on("data", onData).on("end", onEnd).on("error", onFail).on("close", onClose);
  });
}

/**
 * Reads a POST/PATCH body as a JSON object (docs/contract.md §14):
 * `Content-Type: application/json` (parameters such as charset allowed),
 * valid UTF-8, parsable, an object, nested at most MAX_JSON_DEPTH (64)
 * levels deep (the body object counting as one: every later walk of the
 * body is recursive), and every string in it well-formed Unicode (a lone surrogate escape such as `"a\ud800b"` would be stored as
 * U+FFFD and read back different). Anything else: 400. A body over
 * MAX_BODY_BYTES: 413.
 * @returns the parsed object (unknown fields are kept, to be ignored by the schema).
 * @throws ApiError 400 or 413.
 */
export async function readJsonObject(c: Context): Promise<Record<string, unknown>> {
  return parseJsonObject(await readJsonBytes(c, undefined));
}

/**
 * The bytes of a JSON body under a route's limit: MAX_BODY_BYTES, or a
 * LargeBody's `maxBytes` (the caller then applies `admits` to a body over
 * MAX_BODY_BYTES); parseJsonObject makes it an object.
 * @throws ApiError 400 (not `application/json`, a broken-off body) or 413.
 */
async function readJsonBytes(c: Context, large: LargeBody | undefined): Promise<Uint8Array> {
  // From the Node request's own headers: no web Headers object built for one read.
  const type = requestHeader(c, "content-type") ?? "";
  if (!JSON_TYPE.test(type.trim())) throw new ApiError(400, "Content-Type must be application/json");
  return readBodyBytes(c, large);
}

/**
 * A body's bytes as the JSON object readJsonObject describes (UTF-8, an
 * object, MAX_JSON_DEPTH, no lone surrogate).
 * @throws ApiError 400.
 */
function parseJsonObject(bytes: Uint8Array): Record<string, unknown> {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new ApiError(400, "body is not valid UTF-8");
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new ApiError(400, "body is not valid JSON");
  }
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw new ApiError(400, "body must be a JSON object");
  }
  const fault = jsonBodyFault(body);
  if (fault === "too deep") throw new ApiError(400, `body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep`);
  if (fault !== null) throw new ApiError(400, "body contains a lone surrogate (\\uD800-\\uDFFF without its pair)");
  return body as Record<string, unknown>;
}

/**
 * A JSON body with its top-level `null` fields left out (docs/contract.md
 * §14): `null` in an optional request field (`"ttl_seconds": null`,
 * `"max_reads": null`, `"expires_at": null`) means the field is omitted, and
 * `null` in a required one is refused by the schema like a missing field.
 * @param body the object readJsonObject returned.
 * @returns `body` itself when it holds no `null`, else a copy without those fields.
 */
export function withoutNulls(body: Record<string, unknown>): Record<string, unknown> {
  let out: Record<string, unknown> | undefined;
  for (const name in body) {
    if (body[name] !== null) continue;
    if (out === undefined) out = Object.assign({}, body);
    delete out[name];
  }
  return out ?? body;
}

/**
 * Validates input against a valibot schema at the edge. The first issue's
 * message (written in the schema, never echoing the input) becomes the 400.
 * @throws ApiError 400.
 */
export function parse<S extends v.GenericSchema>(schema: S, input: unknown): v.InferOutput<S> {
  const result = v.safeParse(schema, input, { abortEarly: true });
  if (result.success) return result.output;
  const issue = result.issues[0];
  const path = issue?.path?.map((p) => String(p.key)).join(".");
  const reason = issue?.message ?? "invalid input";
  const invalid = invalidErrorOf(schema, issue?.path?.[0]?.key);
  if (invalid !== undefined) throw new ApiError(400, invalid, { message: reason });
  throw new ApiError(400, path && !reason.startsWith(path) ? `${path}: ${reason}` : reason);
}

/** A schema made by invalidAs(): its failure answers this `error`, the rule being the `message`. */
export type InvalidAs<S extends v.GenericSchema> = S & { readonly invalid: string };

/**
 * Marks a field's schema (an entry of a v.object: a path parameter such as
 * `{key}`) so that parse() answers its failure 400 `error`, the schema's
 * own message (the rule, never the input) as `message`: the path key's
 * `400 invalid secret key` (docs/api.md "Global secrets").
 * @returns the same schema, marked.
 */
export function invalidAs<S extends v.GenericSchema>(error: string, schema: S): InvalidAs<S> {
  return Object.assign(schema, { invalid: error });
}

function isObjectSchema(schema: v.GenericSchema): schema is v.ObjectSchema<v.ObjectEntries, undefined> {
  return schema.type === "object" && "entries" in schema;
}

/** The invalidAs() error of the object entry `key` of `schema`, if it has one. */
function invalidErrorOf(schema: v.GenericSchema, key: unknown): string | undefined {
  if (typeof key !== "string" || !isObjectSchema(schema)) return undefined;
  const entry = schema.entries[key];
  return entry !== undefined && "invalid" in entry && typeof entry.invalid === "string" ? entry.invalid : undefined;
}

/** Most levels of nested arrays and objects in a request body, the body itself counting as one (docs/api.md). */
export const MAX_JSON_DEPTH = 64;

/** What makes a parsed JSON body unacceptable (jsonBodyFault). */
export type JsonFault = "too deep" | "lone surrogate";

/**
 * Walks a parsed JSON value (JSON.parse output) without recursion, so no
 * nesting can overflow the stack, and finds the first fault:
 *
 * - "too deep": arrays and objects nested more than `maxDepth` levels, the
 *   outermost one counting as level 1 (docs/api.md: 64). Every later walk
 *   of the body (valibot, JSON.stringify of metadata) is recursive, so the
 *   cap is checked here, first.
 * - "lone surrogate": a string (object keys included) that is not
 *   well-formed Unicode, as `"a\ud800b"` in JSON gives. Such a string cannot
 *   be stored as UTF-8 without turning into U+FFFD, so it would read back
 *   different from what was written.
 *
 * @returns the fault, or null when there is none.
 */
export function jsonBodyFault(value: unknown, maxDepth = MAX_JSON_DEPTH): JsonFault | null {
  // Two parallel stacks (containers and their levels): no tuple allocated per item.
  const containers: unknown[] = [value];
  const levels: number[] = [1];
  while (containers.length > 0) {
    const item = containers.pop();
    const level = levels.pop() as number;
    if (typeof item === "string") {
      if (!isWellFormed(item)) return "lone surrogate";
    } else if (item !== null && typeof item === "object") {
      if (level > maxDepth) return "too deep";
      if (Array.isArray(item)) {
        for (const child of item as unknown[]) {
          if (typeof child === "string") {
            if (!isWellFormed(child)) return "lone surrogate";
          } else if (typeof child === "object" && child !== null) {
            containers.push(child);
            levels.push(level + 1);
          }
        }
      } else {
        for (const [key, child] of Object.entries(item)) {
          if (!isWellFormed(key)) return "lone surrogate";
          if (typeof child === "string") {
            if (!isWellFormed(child)) return "lone surrogate";
          } else if (typeof child === "object" && child !== null) {
            containers.push(child);
            levels.push(level + 1);
          }
        }
      }
    }
  }
  return null;
}

/**
 * String.prototype.isWellFormed (ES2024, in Node 20; the project's TS lib is
 * ES2022): in a `u` regular expression a surrogate pair is one code point,
 * so only a lone surrogate matches \p{Cs}.
 */
const LONE_SURROGATE = /\p{Cs}/u;
function isWellFormed(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}
