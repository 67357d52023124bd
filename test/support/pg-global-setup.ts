import type { TestProject } from "vitest/node";
import { pgAvailability, startPgCluster } from "./pg-cluster.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The throwaway cluster's superuser URL, or null when the PostgreSQL tests are skipped. */
    pgAdminUrl: string | null;
    /** Why the PostgreSQL tests are skipped ("" when they run). */
    pgSkipReason: string;
  }
}

const inCi = (): boolean => {
  const ci = process.env.CI ?? "";
  return ci !== "" && ci !== "false" && ci !== "0";
};

/**
 * Global setup of the `pg` vitest project: starts one throwaway PostgreSQL cluster for the
 * run and returns its teardown (stop, then remove the temp directory). Without PostgreSQL the
 * tests are skipped with the reason printed, except in CI (`CI=true`), where that throws and
 * fails the run.
 */
export async function setup(project: TestProject): Promise<() => Promise<void>> {
  const availability = pgAvailability();
  if (!availability.ok) {
    if (inCi()) throw new Error(`PostgreSQL tests cannot run in CI: ${availability.reason}`);
    console.warn(`\n[pg] PostgreSQL tests skipped: ${availability.reason}\n`);
    project.provide("pgAdminUrl", null);
    project.provide("pgSkipReason", availability.reason);
    return async () => {};
  }
  const cluster = await startPgCluster(availability);
  const onExit = (): void => void cluster.stop();
  process.once("exit", onExit);
  console.log(`[pg] throwaway cluster on 127.0.0.1:${cluster.port} (${availability.bin}), started in ${cluster.startMs} ms`);
  project.provide("pgAdminUrl", cluster.adminUrl);
  project.provide("pgSkipReason", "");
  return async () => {
    process.off("exit", onExit);
    await cluster.stop();
  };
}
