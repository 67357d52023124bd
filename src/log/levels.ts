/**
 * Levels accepted by `VAULT_LOG_LEVEL` (docs/contract.md §3). Apart from
 * log.ts so that reading the configuration does not load the logger: a bad
 * setting must stop the command within a second (docs/contract.md §15).
 */
export const LOG_LEVELS = ["debug", "info", "warn", "error", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
