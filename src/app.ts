import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { requestId } from "hono/request-id";
import type { AppEnv } from "./context.js";
import type { Db } from "./db.js";
import { ApiError, errorResponse } from "./errors.js";
import type { GroupCommit } from "./group-commit.js";
import type { Logger } from "./log.js";
import { authenticate } from "./auth.js";
import type { TokenResolver } from "./auth.js";
import type { SecretLifecycle } from "./domain/secrets.js";
import { buildOpenApi } from "./openapi.js";
import { secretRouteDocs, secretRoutes } from "./routes/secrets.js";
import { healthRouteDocs, healthRoutes } from "./routes/health.js";
import { methodNotAllowed } from "./routes/method.js";

/** Largest request body, bytes (decisions.md section 3): larger gives 413. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** Everything the HTTP layer needs, built by vault.ts: no module-level state. */
export interface AppDeps {
  db: Db;
  tx: GroupCommit;
  secrets: SecretLifecycle;
  log: Logger;
  masterKey: string;
  /** Token lookups besides the master key (scoped keys, principal keys). */
  resolvers: TokenResolver[];
  publicUrl: string;
  maxValueBytes: number;
  trustProxy: boolean;
  version: string;
}

/**
 * Builds the Hono app: request id, security headers, authentication (401
 * before anything else), the 1 MiB body limit, the resource routes, and the
 * one error handler and 404 (both JSON, decisions.md section 10).
 */
export function createApp(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const openapi = JSON.stringify(buildOpenApi(deps.version, [...healthRouteDocs, ...secretRouteDocs, openApiDoc]));

  app.use(requestId());
  app.use(async (c, next) => {
    const started = performance.now();
    await next();
    c.res.headers.set("Cache-Control", "no-store");
    c.res.headers.set("X-Content-Type-Options", "nosniff");
    if (deps.log.isLevelEnabled("debug")) {
      deps.log.debug(
        { requestId: c.get("requestId"), method: c.req.method, route: c.req.routePath, status: c.res.status, ms: Math.round(performance.now() - started) },
        "request",
      );
    }
  });
  app.use(authenticate({ masterKey: deps.masterKey, trustProxy: deps.trustProxy, resolvers: deps.resolvers }));
  app.use(
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: () => {
        throw new ApiError(413, "request body too large", { message: `the body may be at most ${MAX_BODY_BYTES} bytes` });
      },
    }),
  );

  app.route("/", healthRoutes(deps.db));
  app.get("/openapi.json", (c) => c.body(openapi, 200, { "Content-Type": "application/json" }));
  app.all("/openapi.json", methodNotAllowed(["GET", "HEAD"]));
  app.route(
    "/",
    secretRoutes({ secrets: deps.secrets, tx: deps.tx, publicUrl: deps.publicUrl, maxValueBytes: deps.maxValueBytes }),
  );

  app.notFound((c) => c.json({ error: "not found" }, 404));
  app.onError((err, c) => errorResponse(err, c, deps.log));
  return app;
}

const openApiDoc = {
  method: "get" as const,
  path: "/openapi.json",
  summary: "This OpenAPI 3.1 document. No token.",
  permission: "none" as const,
  responses: { 200: "the document" },
};
