import { randomBytes } from "node:crypto";
import pg from "pg";
import { describe, inject } from "vitest";

/** A database of its own for one test file, on the run's throwaway cluster. */
export interface TestDatabase {
  /** Its name, `test_` and 12 hex digits. */
  name: string;
  /** A connection URL for `pg` (superuser, password auth over 127.0.0.1). */
  url: string;
  /** Drops it, closing any connection still open (`WITH (FORCE)`). */
  drop(): Promise<void>;
}

/**
 * `describe` for tests that need PostgreSQL: runs them when the `pg` project's global setup
 * started a cluster, and otherwise skips them with the reason in the suite's title.
 */
export function describePg(name: string, fn: () => void): void {
  const reason = inject("pgSkipReason");
  if (inject("pgAdminUrl") === null) describe.skip(`${name} (skipped: ${reason})`, fn);
  else describe(name, fn);
}

/**
 * Creates a fresh database (`CREATE DATABASE test_<random>`) on the run's cluster.
 * Throws when no cluster runs (call it only inside `describePg`) or the cluster refuses.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = inject("pgAdminUrl");
  if (adminUrl === null) throw new Error("no PostgreSQL cluster for this run");
  const name = `test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}
