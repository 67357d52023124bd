import * as v from "valibot";
import type { Db } from "../db.js";
import type { RouteDecl } from "./declare.js";

/**
 * GET /health, no authentication (decisions.md section 10): 200
 * `{status: "ok"}` when the database answers a query, else 503
 * `{status: "unavailable"}`.
 */
export function healthRouteDecls(db: Db): RouteDecl[] {
  let ping: { get: () => unknown } | undefined;
  return [
    {
      method: "get",
      path: "/health",
      summary: "Liveness and database check. No token.",
      permission: "none",
      responses: {
        200: { description: '{status: "ok"}', schema: v.object({ status: v.literal("ok") }) },
        503: {
          description: '{status: "unavailable"}: the database does not answer',
          schema: v.object({ status: v.literal("unavailable") }),
        },
      },
      handler: (c) => {
        try {
          ping ??= db.prepare("SELECT 1");
          ping.get();
          return c.json({ status: "ok" });
        } catch {
          return c.json({ status: "unavailable" }, 503);
        }
      },
    },
  ];
}
