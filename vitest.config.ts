import { fileURLToPath } from "node:url";
import { configDefaults, defineConfig } from "vitest/config";

// Every test file runs on both engines unless its name says otherwise (docs/testing.md):
//   test/**/*.test.ts         both: `unit` (SQLite) and `pg-matrix` (PostgreSQL)
//   test/**/*.sqlite.test.ts  SQLite only: `unit`
//   test/**/*.pg.test.ts      PostgreSQL only: `pg`
//   test/**/*.ha.test.ts      the HA topology (Patroni, etcd, HAProxy): `ha`
// `npm test` runs the three projects; a PostgreSQL project starts its throwaway cluster
// only when one of its files is selected.
const ALL = "test/**/*.test.ts";
const SQLITE_ONLY = "test/**/*.sqlite.test.ts";
const PG_ONLY = "test/**/*.pg.test.ts";
/** The HA topology's tests (Patroni, etcd, HAProxy: test/support/ha-cluster.ts), in a project of their own. */
const HA_ONLY = "test/**/*.ha.test.ts";
/** Both-engine files whose tests race units of work against each other (run once more on PostgreSQL without its group commit). */
const GROUP_COMMIT_RACES = [
  "test/domain/secrets/concurrency.test.ts",
  "test/domain/orgs/principal-key-lineage.test.ts",
  "test/webhooks/delivery.test.ts",
  "test/webhooks/claims.test.ts",
  "test/domain/secrets/replace.test.ts",
  "test/domain/secrets/rollback-limit.test.ts",
  "test/domain/requests/requests.test.ts",
  "test/http/routes/idempotency.test.ts",
];

export default defineConfig({
  // The client workspace package from its sources, as tsconfig.json's paths do (the built server uses its dist/).
  resolve: { alias: [{ find: /^@ephemeral-vault\/client$/, replacement: fileURLToPath(new URL("packages/client/src/index.ts", import.meta.url)) }] },
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    projects: [
      {
        // SQLite, the default engine: every file but the PostgreSQL-only ones.
        extends: true,
        test: {
          name: "unit",
          include: [ALL],
          exclude: [...configDefaults.exclude, PG_ONLY, HA_ONLY],
          globalSetup: ["test/support/global-setup.ts"],
        },
      },
      {
        extends: true,
        test: {
          name: "pg",
          include: [PG_ONLY],
          // The build first (the multi-node tests run bin/ephemeral-vault.js), then the cluster.
          globalSetup: ["test/support/global-setup.ts", "test/support/pg-global-setup.ts"],
        },
      },
      {
        // The engine matrix: every file that is not SQLite-only or PostgreSQL-only, run
        // again on PostgreSQL (VAULT_TEST_ENGINE=pg: test/support/helpers.ts TEST_ENGINE,
        // test/support/e2e-helpers.ts startVault).
        extends: true,
        test: {
          name: "pg-matrix",
          include: [ALL],
          exclude: [...configDefaults.exclude, PG_ONLY, SQLITE_ONLY, HA_ONLY],
          env: { VAULT_TEST_ENGINE: "pg" },
          globalSetup: ["test/support/global-setup.ts", "test/support/pg-global-setup.ts"],
        },
      },
      {
        // The tests of races between units of work, again on PostgreSQL with one
        // transaction per unit (VAULT_DATABASE_GROUP_COMMIT=false; pg-matrix runs the
        // default, the group commit: test/support/test-engine.ts).
        extends: true,
        test: {
          name: "pg-single",
          include: GROUP_COMMIT_RACES,
          env: { VAULT_TEST_ENGINE: "pg", VAULT_TEST_PG_GROUP_COMMIT: "false" },
          globalSetup: ["test/support/global-setup.ts", "test/support/pg-global-setup.ts"],
        },
      },
      {
        // The HA topology (docs/scaling.md "High availability"): the file starts its own etcd,
        // Patroni members and HAProxy, and the vault nodes on them.
        extends: true,
        test: {
          name: "ha",
          include: [HA_ONLY],
          globalSetup: ["test/support/global-setup.ts"],
        },
      },
    ],
  },
});
