import { Hono } from "hono";
import type { AppEnv } from "../context.js";
import type { Db } from "../db.js";
import type { RouteDoc } from "../openapi.js";
import { methodNotAllowed } from "./method.js";

/**
 * GET /health, no authentication (decisions.md section 10): 200
 * `{status: "ok"}` when the database answers a query, else 503
 * `{status: "unavailable"}`.
 */
export function healthRoutes(db: Db): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  let ping: { get: () => unknown } | undefined;
  app.get("/health", (c) => {
    try {
      ping ??= db.prepare("SELECT 1");
      ping.get();
      return c.json({ status: "ok" });
    } catch {
      return c.json({ status: "unavailable" }, 503);
    }
  });
  app.all("/health", methodNotAllowed(["GET", "HEAD"]));
  return app;
}

export const healthRouteDocs: RouteDoc[] = [
  {
    method: "get",
    path: "/health",
    summary: "Liveness and database check. No token.",
    permission: "none",
    responses: {
      200: { description: '{status: "ok"}', schema: { type: "object", properties: { status: { const: "ok" } } } },
      503: {
        description: '{status: "unavailable"}: the database does not answer',
        schema: { type: "object", properties: { status: { const: "unavailable" } } },
      },
    },
  },
];
