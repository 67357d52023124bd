import { ConfigError } from "../config.js";
import { DURATION_FORMS, durationSeconds } from "../model/duration.js";

/**
 * Parses a DURATION of the command line: whole seconds (`30`) or a number with
 * one unit, `30s`, `15m`, `2h`, `7d` (model/duration.ts, shared with the console).
 * @returns the duration in seconds (a positive integer).
 * @throws ConfigError (exit 2) for anything else, zero included.
 */
export function parseDuration(text: string): number {
  const seconds = durationSeconds(text);
  if (seconds === undefined) throw new ConfigError(`bad duration "${text}": use ${DURATION_FORMS}`);
  return seconds;
}

/**
 * Parses a read count (`--reads N`).
 * @returns N, a positive integer.
 * @throws ConfigError (exit 2) when N is not one.
 */
export function parseReads(text: string): number {
  const reads = /^\d{1,12}$/.test(text.trim()) ? Number(text) : NaN;
  if (!Number.isSafeInteger(reads) || reads <= 0) throw new ConfigError(`bad read count "${text}": use a whole number of 1 or more`);
  return reads;
}
