/**
 * The PostgreSQL engine's speed machinery, one entry for the rest of the
 * engine (the layer check: nothing outside this folder imports another of
 * its files): the unit of work and the group commit over it
 * (unit-of-work.ts, group-commit.ts, shared-batch.ts), the ordering
 * declaration of the statements a batch cannot share (ordering.ts), the
 * write-behind statements (write-behind.ts), the corked connection
 * (cork.ts), the prefetching webhook store (prefetch.ts) and the prepared
 * statements (prepared.ts); docs/performance.md, "PostgreSQL".
 */
export { PgGroupCommit, DEFAULT_MAX_BATCH, DEFAULT_MAX_IN_FLIGHT } from "./group-commit.js";
export { PgUnitOfWork, BATCH_LOCK_TIMEOUT_MS, RUN_ALONE } from "./unit-of-work.js";
export type { PgUnits, UnitParts } from "./unit-of-work.js";
export type { Queryable } from "./queryable.js";
export { NeedsOrder } from "./shared-batch.js";
export { ADVISORY_XACT_LOCK, declaresOrdering, orderingStatement } from "./ordering.js";
export type { DeclaredConfig, OrderingStatement } from "./ordering.js";
export { WriteBehind } from "./write-behind.js";
export { CorkedConnection, corkedConnection } from "./cork.js";
export { PrefetchingWebhookStore } from "./prefetch.js";
export { prepared, runPrepared, withoutPreparedStatements } from "./prepared.js";
export type { Prepared } from "./prepared.js";
