import { pino } from "pino";
import type { Logger as PinoLogger, DestinationStream } from "pino";
import type { LogLevel } from "./levels.js";

export { LOG_LEVELS } from "./levels.js";
export type { LogLevel } from "./levels.js";

/** The structured logger used everywhere (pino). Never give it a secret value or token. */
export type Logger = PinoLogger;

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
