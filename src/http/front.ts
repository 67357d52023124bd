import { randomUUID } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import type { AccessRecordDeps } from "./access-guard.js";
import { completeAccessRecord } from "./access-guard.js";
import { bearerActor, forwardedIp, PUBLIC_PATHS, requestHeader, socketIp } from "./auth.js";
import type { NodeEnv, TokenResolver } from "./auth.js";
import type { Actor, AppEnv } from "./context.js";
import { originFor } from "./context.js";
import { SecretMatcher } from "../crypto/tokens.js";
import type { Origin } from "../domain/events.js";
import { ApiError, errorResponse } from "./errors.js";
import type { Logger } from "../log/log.js";
import type { VaultMetrics } from "../runtime/metrics.js";
import { STATIC_HEADERS, VaultResponse } from "./response.js";
import { andThen } from "../store/work.js";

/** What the front middleware needs; built once by createApp. */
export interface FrontDeps extends AccessRecordDeps {
  masterKey: string;
  /** Token lookups besides the master key (scoped keys, principal keys), tried in order. */
  resolvers: readonly TokenResolver[];
  trustProxy: boolean;
  log: Logger;
  /** Counts every answered request (route template, status, duration). */
  metrics: VaultMetrics;
  /** Paths answered without a token besides /health and /openapi.json (the share pages); undefined: none. */
  isOpenPath?: ((path: string) => boolean) | undefined;
}

/** An X-Request-Id a trusted proxy may hand on: 1 to 128 characters of A-Z a-z 0-9 . _ - */
const FORWARDED_REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * The one middleware in front of every route, doing in one pass what the
 * request needs before and after its handler:
 *
 * 1. a request id (`X-Request-Id`: the trusted proxy's when
 *    VAULT_TRUST_PROXY is set and it is well formed, else a new UUID) and
 *    the headers of every answer (Cache-Control: no-store,
 *    X-Content-Type-Options: nosniff), written with the status line by
 *    the vault server's VaultResponse (http/response.ts), else set on the
 *    outgoing Node response, so no web Headers object is built for them;
 * 2. for every path but /health and /openapi.json: the client ip (the
 *    socket's, or the last X-Forwarded-For entry behind a trusted proxy), 429 with
 *    Retry-After (seconds) for an ip over the failed-authentication limit,
 *    then the bearer token to an actor (401 before anything else,
 *    docs/contract.md §8) and the request's origin (its audit record); only
 *    a 401 of a request that carried an Authorization header counts toward
 *    the guard (access-guard.ts);
 * 3. after the handler: the access record (access-guard.ts
 *    completeAccessRecord: auth.failed, auth.denied, scoped-key rows), and
 *    one JSON log line at `info`: request id, method, route template (never
 *    the path itself), status, duration in ms, actor kind (`master`,
 *    `scoped`, `principal`, or null when unauthenticated).
 *
 * Requests made in process (`app.request()`, no Node response) get the same
 * headers through Hono.
 * @throws ApiError 429 for a blocked ip (answered by app.onError).
 */
export function front(deps: FrontDeps): MiddlewareHandler<AppEnv> {
  const master = new SecretMatcher(deps.masterKey);
  const logRequests = deps.log.isLevelEnabled("info");
  return async (c, next) => {
    const started = performance.now();
    const forwardedId = deps.trustProxy ? requestHeader(c, "x-request-id") : undefined;
    const id = forwardedId !== undefined && FORWARDED_REQUEST_ID.test(forwardedId) ? forwardedId : randomUUID();
    c.set("requestId", id);
    const outgoing = (c.env as NodeEnv | undefined)?.outgoing;
    if (outgoing instanceof VaultResponse) {
      // The vault's server writes it, with STATIC_HEADERS, in the response's one writeHead.
      outgoing.requestId = id;
    } else if (outgoing !== undefined) {
      outgoing.setHeader("X-Request-Id", id);
      for (const [name, value] of STATIC_HEADERS) outgoing.setHeader(name, value);
    } else {
      c.header("X-Request-Id", id);
      for (const [name, value] of STATIC_HEADERS) c.header(name, value);
    }

    if (PUBLIC_PATHS.has(c.req.path) || deps.isOpenPath?.(c.req.path) === true) {
      await next();
    } else {
      // A forwarded address is counted whatever it claims (loopback too): only a
      // direct loopback peer is exempt from the brute-force guard (failed-auth.ts).
      const forwarded = deps.trustProxy ? forwardedIp(c) : undefined;
      const ip = forwarded ?? socketIp(c);
      const viaProxy = forwarded !== undefined;
      c.set("ip", ip);
      const waitMs = deps.limiter.retryAfterMs(ip, viaProxy);
      if (waitMs > 0) {
        throw new ApiError(429, "too many failed authentications", {
          message: "too many requests with a missing or invalid token from this address; try again later",
          headers: { "Retry-After": String(Math.ceil(waitMs / 1000)) },
        });
      }
      let actor: Actor | undefined;
      let origin: Origin | undefined;
      const authorization = requestHeader(c, "authorization");
      try {
        // Awaited only when a resolver answered with a promise: the master key and a
        // synchronous store cost no extra turn (andThen, store/work.ts).
        const found = andThen(bearerActor(authorization, master, deps.resolvers), (a) => {
          actor = a;
        });
        if (found !== undefined) await found;
      } catch (err) {
        // Answered here, not by app.onError, so the access record below sees the 401.
        c.res = errorResponse(err, c, deps.log);
      }
      if (actor !== undefined) {
        deps.limiter.succeeded(ip, viaProxy);
        origin = originFor(actor, ip);
        c.set("actor", actor);
        c.set("origin", origin);
        await next();
      }
      const recorded = completeAccessRecord(deps, c, ip, viaProxy, actor, origin, authorization !== undefined);
      if (recorded !== undefined) await recorded;
    }
    const ms = performance.now() - started;
    const route = c.req.routePath;
    deps.metrics.observeRequest(c.req.method, route, c.res.status, ms / 1000);
    if (logRequests) {
      // Route templates only (`/secrets/:key{.+}`): never a key, id, token or query in the log.
      const actor = c.get("actor") as Actor | undefined;
      deps.log.info(
        {
          requestId: id,
          method: c.req.method,
          route,
          status: c.res.status,
          ms: Math.round(ms * 10) / 10,
          actor: actor?.kind ?? null,
        },
        "request",
      );
    }
  };
}
