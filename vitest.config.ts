import { configDefaults, defineConfig } from "vitest/config";

// Two projects: `unit` (everything on SQLite, in-process and end-to-end) and `pg` (tests
// against a real throwaway PostgreSQL cluster, *.pg.test.ts). `npm test` runs both; the pg
// project starts its cluster only when one of its files is selected.
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["test/**/*.test.ts"],
          exclude: [...configDefaults.exclude, "test/**/*.pg.test.ts"],
          globalSetup: ["test/global-setup.ts"],
        },
      },
      {
        extends: true,
        test: {
          name: "pg",
          include: ["test/**/*.pg.test.ts"],
          // The build first (the multi-node tests run bin/ephemeral-vault.js), then the cluster.
          globalSetup: ["test/global-setup.ts", "test/pg-global-setup.ts"],
        },
      },
    ],
  },
});
