import { configDefaults, defineConfig } from "vitest/config";

// Two projects: `unit` (everything on SQLite, in-process and end-to-end) and `pg` (tests
// against a real throwaway PostgreSQL cluster, *.pg.test.ts). `npm test` runs both; the pg
// project starts its cluster only when one of its files is selected.
/** Test files that run on both engines. */
const PG_MATRIX = [
  "test/http-hardening.test.ts",
  "test/mcp.test.ts",
  "test/mcp-agent.test.ts",
  "test/client.test.ts",
  "test/cli.test.ts",
  "test/cli-admin.test.ts",
  "test/cli-failures.test.ts",
  "test/webhook-routes.test.ts",
  "test/webhook-address-guard.test.ts",
  "test/crypto.test.ts",
  "test/rollback-limit.test.ts",
  "test/concurrency.test.ts",
  "test/input-hardening.test.ts",
  "test/json-depth.test.ts",
  "test/license.test.ts",
  "test/me.test.ts",
  "test/metrics.test.ts",
  "test/openapi.test.ts",
  "test/org-audit.test.ts",
  "test/org-authz.test.ts",
  "test/management-audit.test.ts",
  "test/principal-key-lineage.test.ts",
  "test/org-secrets.test.ts",
  "test/request-log.test.ts",
  "test/secret-check.test.ts",
  "test/security.test.ts",
  "test/smoke.test.ts",
  "test/webhook-limits.test.ts",
  "test/keys.test.ts",
  "test/orgs.test.ts",
  "test/secrets-routes.test.ts",
  "test/secret-replace.test.ts",
  "test/replace-e2e.test.ts",
  "test/docker-image.test.ts",
  "test/webhook-delivery.test.ts",
  "test/webhook-next-retry.test.ts",
  "test/auth-limiter.test.ts",
  "test/auth-failure-coalescing.test.ts",
  "test/audit.test.ts",
  "test/validation.test.ts",
  "test/webhook-subscribers.test.ts",
  "test/webhook-fairness.test.ts",
  "test/webhook-signing.test.ts",
  "test/webhook-outbox.test.ts",
  "test/webhook-test-event.test.ts",
  "test/lifecycle.test.ts",
  "test/lifecycle-ttl.test.ts",
  "test/lifecycle-change.test.ts",
  "test/lifecycle-events.test.ts",
  "test/domain-refusals.test.ts",
  "test/key-segments.test.ts",
  "test/client-key-paths.test.ts",
  // End to end: the built command on PostgreSQL (test/e2e-helpers.ts startVault).
  "test/e2e.test.ts",
  "test/webhooks-e2e.test.ts",
  // The share pages: their routes in process, and in Chromium against the built server.
  "test/share-routes.test.ts",
  "test/share-page.test.ts",
  // The console (/ui): sessions in process, and in Chromium against the built server.
  "test/console-session.test.ts",
  "test/console.test.ts",
];

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
      {
        // The test matrix: the route and domain tests that need no SQLite
        // internals, run again on PostgreSQL (test/helpers.ts TEST_ENGINE).
        extends: true,
        test: {
          name: "pg-matrix",
          include: PG_MATRIX,
          env: { VAULT_TEST_ENGINE: "pg" },
          globalSetup: ["test/global-setup.ts", "test/pg-global-setup.ts"],
        },
      },
    ],
  },
});
