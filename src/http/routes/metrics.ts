import type { VaultMetrics } from "../../runtime/metrics.js";
import * as v from "valibot";
import type { Route } from "./declare.js";
import { route } from "./declare.js";

/**
 * GET /metrics: the Prometheus text exposition of the vault's metrics
 * (runtime/metrics.ts), for the master key or VAULT_METRICS_TOKEN (a token that may
 * read this and nothing else). Labels are route templates, never keys, ids
 * or tokens.
 */
export function metricsRoute(deps: { metrics: VaultMetrics }): Route {
  return route({
    method: "get",
    path: "/metrics",
    summary: "Prometheus metrics (text exposition format). The master key or VAULT_METRICS_TOKEN.",
    permission: "metrics",
    responses: {
      200: { description: "the metrics in the Prometheus text format, version 0.0.4", schema: v.string(), contentType: "text/plain" },
    },
    handler: async (c) => {
      const body = await deps.metrics.registry.metrics();
      return c.body(body, 200, { "Content-Type": deps.metrics.registry.contentType });
    },
  });
}
