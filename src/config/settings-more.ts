import { flag, int, row, text } from "./setting.js";
import type { SettingsTable } from "./setting.js";
import * as value from "./values.js";

// Rows of the settings table (settings.ts) for the webhooks and the database
// engine, apart so that each file stays small.

/** The webhook settings (docs/webhooks.md). */
export const WEBHOOK_SETTINGS: Pick<
  SettingsTable,
  | "webhookSecret"
  | "webhookAllowPrivate"
  | "webhookTimeoutMs"
  | "webhookMaxAttempts"
  | "webhookRetryBaseMs"
  | "webhooksPerScope"
  | "webhookScopeConcurrency"
  | "webhookFailingAfter"
> = {
  webhookSecret: row(
    ["VAULT_WEBHOOK_SECRET"],
    text("16+ characters", value.longSecret, undefined, "generated"),
    "HMAC key for webhook signatures (unset: generated into <data dir>/webhook.secret)",
    "HMAC key of webhook signatures (`X-Vault-Signature`); each webhook's own signing secret (`webhook-signature`) is derived from it, so changing it changes them all ([webhooks.md](webhooks.md)). Unset: generated into `<data dir>/webhook.secret` and printed once",
  ),
  webhookAllowPrivate: row(
    ["VAULT_WEBHOOK_ALLOW_PRIVATE"],
    flag(false),
    "let webhooks target loopback and private addresses (development only)",
    "lets webhooks target loopback and private addresses (development and tests only); the start then logs a warning saying so",
  ),
  webhookTimeoutMs: row(["VAULT_WEBHOOK_TIMEOUT_MS"], int(1, 600_000, 10_000), "one delivery attempt's time limit, ms", "one delivery attempt's time limit, ms"),
  webhookMaxAttempts: row(["VAULT_WEBHOOK_MAX_ATTEMPTS"], int(1, 100, 8), "attempts per delivery, the first included", "attempts per delivery, the first included"),
  webhookRetryBaseMs: row(
    ["VAULT_WEBHOOK_RETRY_BASE_MS"],
    int(1, 3_600_000, 1000),
    "retry backoff base, ms",
    "backoff base, ms: attempt n (n >= 2) waits `base * 2^(n-2)` ms, +-20% jitter, capped at 1 hour",
  ),
  webhooksPerScope: row(
    ["VAULT_WEBHOOKS_PER_SCOPE"],
    int(1, 100_000, 25),
    "webhooks at most for the global scope and for each org",
    "webhooks at most for the global scope and for each org; one more is 409 ([webhooks.md](webhooks.md))",
  ),
  webhookScopeConcurrency: row(
    ["VAULT_WEBHOOK_SCOPE_CONCURRENCY"],
    int(1, 8, 4),
    "delivery slots (of 8) one scope, global or an org, may hold at once; fewer while its attempts time out",
    "delivery slots (of the worker's 8) one scope, the global one or an org, may hold at once; a scope whose attempts time out gets fewer, and such scopes hold at most half the slots together ([webhooks.md](webhooks.md))",
  ),
  webhookFailingAfter: row(
    ["VAULT_WEBHOOK_FAILING_AFTER"],
    int(1, 1_000_000, 5),
    "consecutive failed deliveries that mark a webhook failing: no more retries",
    "consecutive failed deliveries (every attempt failed) after which a webhook is marked failing: its deliveries get one attempt each, no retries, until one succeeds ([webhooks.md](webhooks.md))",
  ),
};

/** The PostgreSQL engine's settings (docs/scaling.md). */
export const DATABASE_SETTINGS: Pick<SettingsTable, "databaseUrl" | "databasePoolSize" | "databasePreparedStatements" | "databaseGroupCommit"> = {
  databaseUrl: row(
    ["VAULT_DATABASE_URL"],
    text("a `postgres://` or `postgresql://` URL", value.postgresUrl, undefined, "none"),
    "postgres://user:pass@host:5432/db selects PostgreSQL (several nodes on one database); unset: SQLite in the data directory",
    "`postgres://user:password@host:5432/database` selects the PostgreSQL engine: several vault nodes on one database ([scaling.md](scaling.md)). The URL's options (`sslmode`, ...) are honoured; its password is never printed. With it, `VAULT_ENCRYPTION_KEY`, `VAULT_MASTER_KEY` and `VAULT_WEBHOOK_SECRET` must be set (shared by every node). Unset: SQLite in `VAULT_DATA_DIR`",
  ),
  databasePoolSize: row(["VAULT_DATABASE_POOL_SIZE"], int(1, 1000, 10), "PostgreSQL connections per node at most", "PostgreSQL connections per node at most"),
  databasePreparedStatements: row(
    ["VAULT_DATABASE_PREPARED_STATEMENTS"],
    flag(true),
    "PostgreSQL: parse the hot-path statements once per connection (false behind a transaction-mode pooler such as PgBouncer < 1.21)",
    "PostgreSQL: run the hot-path statements as named prepared statements, parsed once per connection. `false` behind a pooler in transaction mode that does not track them (PgBouncer before 1.21, or with `max_prepared_statements = 0`)",
  ),
  databaseGroupCommit: row(
    ["VAULT_DATABASE_GROUP_COMMIT"],
    flag(true),
    "PostgreSQL: the requests of one event-loop turn share one transaction and one COMMIT",
    "PostgreSQL: the units of work of one event-loop turn run at once in one transaction (their statements interleaved on one pipelined connection); a unit that asks for an advisory lock, a row lock (`FOR UPDATE`, `FOR SHARE`) or a `SKIP LOCKED` claim before changing anything runs alone after the batch's COMMIT; every answer after the COMMIT; a failed statement rolls the batch back and runs each unit again alone (bounded at 64 units, 4 batches in flight, a lock wait in a batch 20 ms). `false`: one transaction per request ([performance.md](performance.md) \"PostgreSQL\", [scaling.md](scaling.md))",
  ),
};
