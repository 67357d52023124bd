import * as v from "valibot";
import type { DbFileCheck } from "../../store/engine.js";
import type { UnitOfWork, Work } from "../../store/work.js";
import type { Route } from "./declare.js";
import { route } from "./declare.js";

/** A successful write check is trusted this long before /health writes again, milliseconds. */
export const HEALTH_WRITE_EVERY_MS = 1000;

/** What GET /health checks: the database, its write path, and that its file is still at its path. */
export interface HealthDeps {
  /** The unit of work both checks go through, as every read and write does. */
  tx: UnitOfWork<Work>;
  /** Current time, Unix milliseconds. */
  now: () => number;
  /** The database file's identity; undefined for `:memory:`. */
  dbFile?: DbFileCheck | undefined;
  /**
   * Why the HTTPS listener has no real certificate yet (ACME, docs/deploy.md
   * "Certificates by ACME"), e.g. `waiting for certificate: order under way`;
   * undefined once it has one, or without ACME.
   */
  tlsWaiting?: (() => string | undefined) | undefined;
}

/**
 * GET /health, no authentication (docs/contract.md §14): 200
 * `{status: "ok"}` when the database answers a read, takes a write and is
 * still the file at its path; else 503 `{status: "unavailable"}`. While
 * the ACME certificate is awaited: 503 `{status: "unavailable", details:
 * {tls: "waiting for certificate: <reason>"}}`.
 *
 * The write check updates the meta row `health_checked_at` through the
 * group commit (so it shares a batch and its fsync with requests) at most
 * once per HEALTH_WRITE_EVERY_MS after a success, on every call after a
 * failure: a full disk or a read-only file system turns /health to 503
 * within a second.
 */
export function healthRoutes(deps: HealthDeps): Route[] {
  const { tx, now, dbFile, tlsWaiting } = deps;
  let lastWriteOk = Number.NEGATIVE_INFINITY;
  return [
    route({
      method: "get",
      path: "/health",
      summary: "Liveness, database read and write check. No token.",
      permission: "none",
      responses: {
        200: { description: '{status: "ok"}', schema: v.object({ status: v.literal("ok") }) },
        503: {
          description:
            '{status: "unavailable"}: the database does not answer or take a write, or its file was deleted or replaced; with `details.tls` while the ACME certificate is awaited',
          schema: v.object({ status: v.literal("unavailable"), details: v.optional(v.object({ tls: v.string() })) }),
        },
      },
      handler: async (c) => {
        const waiting = tlsWaiting?.();
        if (waiting !== undefined) return c.json({ status: "unavailable" as const, details: { tls: waiting } }, 503);
        try {
          if (dbFile !== undefined && !dbFile.present()) throw new Error("database file gone");
          const at = now();
          if (at - lastWriteOk >= HEALTH_WRITE_EVERY_MS) {
            lastWriteOk = Number.NEGATIVE_INFINITY;
            await tx.run((w) => w.meta.set("health_checked_at", String(at)));
            lastWriteOk = at;
          } else {
            await tx.run((w) => w.meta.get("health_checked_at"));
          }
          return c.json({ status: "ok" });
        } catch {
          return c.json({ status: "unavailable" }, 503);
        }
      },
    }),
  ];
}
