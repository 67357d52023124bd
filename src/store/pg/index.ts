/**
 * The PostgreSQL engine (VAULT_DATABASE_URL), loaded only when selected so a
 * SQLite vault never imports `pg`.
 */
export { openPgEngine, pgEngineOver, createPgWork } from "./engine.js";
export type { PgEngine } from "./engine.js";
export { migratePg, MIGRATION_LOCK } from "./migrate.js";
export { openPgPool } from "./pool.js";
export { redactCredentials, redactUrl } from "./redact.js";
export { verifyPgRootKeys } from "./root-keys.js";
export { PgUnitOfWork, PgGroupCommit } from "./batch/index.js";
export type { PgUnits } from "./batch/index.js";
