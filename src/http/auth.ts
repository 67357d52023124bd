import { andThen } from "../store/work.js";
import type { Awaitable } from "../store/work.js";
import type { MiddlewareHandler } from "hono";
import type { IncomingMessage, ServerResponse } from "node:http";
import { isIP } from "node:net";
import { getConnInfo } from "@hono/node-server/conninfo";
import type { SecretMatcher } from "../crypto/tokens.js";
import { ApiError } from "./errors.js";
import type { Actor, AppEnv } from "./context.js";
import { holdsPermission } from "../domain/permissions.js";
import type { Permission } from "../domain/permissions.js";

/**
 * Looks a non-master token up (by its SHA-256, in a unit of work of its own,
 * so only committed keys are seen) and returns its actor, or undefined when
 * the token is not of its kind or unknown. Throws (rejects with) VaultError
 * "unauthorized" (401, the domain's lookup) for a known but expired or
 * not-yet-valid key; front.ts counts that 401 like any other.
 */
export type TokenResolver = (token: string) => Awaitable<Actor | undefined>;

/** Paths served without a token (docs/contract.md §2, §14). */
export const PUBLIC_PATHS: ReadonlySet<string> = new Set(["/health", "/openapi.json"]);

/**
 * A request header, lower-case `name`: read straight from the Node
 * IncomingMessage when the app runs on @hono/node-server (no web Headers
 * object is built on the hot path), else through Hono (in-process requests).
 */
export function requestHeader(c: Parameters<MiddlewareHandler<AppEnv>>[0], name: string): string | undefined {
  const incoming = (c.env as NodeEnv | undefined)?.incoming;
  if (incoming !== undefined) {
    const value = incoming.headers[name];
    return Array.isArray(value) ? value.join(", ") : value;
  }
  return c.req.header(name);
}

/** The bindings @hono/node-server hands the app (`c.env`). */
export interface NodeEnv {
  incoming: IncomingMessage;
  outgoing: ServerResponse;
}

/**
 * The client ip a trusted proxy forwarded (VAULT_TRUST_PROXY): the LAST
 * X-Forwarded-For entry, the address the proxy itself saw and appended.
 * Entries before it are whatever the client wrote, so trusting the first one
 * would let anyone choose the ip in the audit log and the brute-force guard.
 * undefined without the header, or when that entry is not an IP address
 * (net.isIP): then the socket's address counts (socketIp).
 */
export function forwardedIp(c: Parameters<MiddlewareHandler<AppEnv>>[0]): string | undefined {
  const last = requestHeader(c, "x-forwarded-for")?.split(",").pop()?.trim();
  // Only an IP address: anything else (a hostname, 8000 characters of junk) is not stored or counted.
  return last && isIP(last) !== 0 ? last : undefined;
}

/** The socket's remote address; null when unknown (in-process requests). */
export function socketIp(c: Parameters<MiddlewareHandler<AppEnv>>[0]): string | null {
  const incoming = (c.env as NodeEnv | undefined)?.incoming;
  if (incoming !== undefined) return incoming.socket.remoteAddress ?? null;
  try {
    return getConnInfo(c).remote.address ?? null;
  } catch {
    return null;
  }
}

/**
 * The actor behind an `Authorization: Bearer <token>` header (docs/contract.md
 * §8): the master key (compared in constant time by `master`), or
 * whatever a resolver (scoped keys, principal keys) makes of the token:
 * synchronous for the master key, a promise when a resolver reads the
 * database.
 * Called before any input is read: 401 comes before 403, 400 and 404
 * (docs/contract.md §8).
 * @param header the Authorization header's value, or undefined.
 * @throws ApiError 401 for a missing, malformed, unknown, expired or
 *   not-yet-valid token.
 */
export function bearerActor(header: string | undefined, master: SecretMatcher, resolvers: readonly TokenResolver[]): Awaitable<Actor> {
  if (header === undefined) throw new ApiError(401, "missing bearer token");
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  if (!m) throw new ApiError(401, "malformed Authorization header, expected Bearer <token>");
  const token = m[1] as string;
  // The master key needs no database: answered at once.
  if (master.matches(token)) return { kind: "master" };
  return resolveToken(token, resolvers, 0);
}

/**
 * Tries the resolvers from `from` on, in order, each after the previous one
 * has answered.
 * @throws ApiError 401 when none knows the token.
 */
function resolveToken(token: string, resolvers: readonly TokenResolver[], from: number): Awaitable<Actor> {
  const resolver = resolvers[from];
  if (resolver === undefined) throw new ApiError(401, "invalid token");
  return andThen(resolver(token), (actor) => actor ?? resolveToken(token, resolvers, from + 1));
}

/**
 * The check of a route that needs a scoped-key permission, built once per
 * route by routes/declare.ts from the route's declaration. The master key
 * holds every permission; scoped keys are judged by the one table,
 * PERMISSION_GRANTED_BY (domain/permissions.ts).
 * @param auditAction the audit action of a scoped-key request whose handler
 *   records none (docs/contract.md §11), put on the context for the access guard.
 * @throws ApiError 403 when the actor lacks it.
 */
export function need(permission: Permission, auditAction?: string): RouteCheck {
  return (c) => {
    const actor = c.get("actor");
    if (actor.kind === "master") return;
    if (actor.kind === "scoped") {
      if (holdsPermission(actor.permissions, permission)) {
        // Only scoped-key requests are audited by the route's action.
        if (auditAction !== undefined) c.set("auditAction", auditAction);
        return;
      }
      throw new ApiError(403, `this key lacks the ${permission} permission`);
    }
    if (actor.kind === "metrics") throw new ApiError(403, "the metrics token may read only /metrics");
    // Principal keys serve only their org's routes and /me (docs/contract.md §8).
    throw new ApiError(403, "principal keys may use only their organization's routes and /me");
  };
}

/**
 * A route's authorization check (docs/contract.md §8), built once per
 * route by routes/declare.ts and called synchronously before the handler.
 * Returns when the actor may call the route.
 * @throws ApiError 403 when it may not.
 */
export type RouteCheck = (c: Parameters<MiddlewareHandler<AppEnv>>[0]) => void;

/**
 * The key prefix the request is restricted to: a prefix-scoped key's
 * prefix, else undefined (master key, unprefixed keys). Lists and prunes
 * pass it on (docs/contract.md §8: an admin key with a prefix lists and
 * prunes only its prefix).
 */
export function keyPrefixOf(c: Parameters<MiddlewareHandler<AppEnv>>[0]): string | undefined {
  const actor = c.get("actor");
  return actor.kind === "scoped" && actor.prefix !== null ? actor.prefix : undefined;
}

/**
 * Prefix scoping, on every request that names a secret (docs/contract.md
 * §8): a prefix-scoped key may act only on keyed secrets whose key
 * starts with its prefix. Call it before validating or looking the secret
 * up, so the answer is 403 whether or not the secret exists.
 * @param key the secret's key, or null for a public secret (a public id,
 *   or a POST without `key`): always out of reach of a prefixed key.
 * @throws ApiError 403 outside the prefix.
 */
export function requireInPrefix(c: Parameters<MiddlewareHandler<AppEnv>>[0], key: string | null): void {
  const prefix = keyPrefixOf(c);
  if (prefix === undefined) return;
  if (key === null || !key.startsWith(prefix)) {
    throw new ApiError(403, "this key may act only on secrets within its prefix");
  }
}
