import { pino } from "pino";
import type { Logger as PinoLogger, DestinationStream } from "pino";

/** The structured logger used everywhere (pino). Never give it a secret value or token. */
export type Logger = PinoLogger;

/** Levels accepted by `VAULT_LOG_LEVEL` (decisions.md section 1). */
export const LOG_LEVELS = ["debug", "info", "warn", "error", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * Builds the process logger: JSON lines on stdout (or `destination`), with
 * the `authorization` header and any `value`/`token` field redacted as a
 * second line of defence; the first is never passing them at all.
 */
export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: "ephemeral-vault" },
      redact: {
        paths: ["value", "token", "masterKey", "*.value", "*.token", "headers.authorization", "req.headers.authorization"],
        censor: "[redacted]",
      },
    },
    destination,
  );
}
