import { ConfigError } from "../config.js";

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/**
 * Parses a DURATION of the command line: whole seconds (`30`) or a number with
 * one unit, `30s`, `15m`, `2h`, `7d`.
 * @returns the duration in seconds (a positive integer).
 * @throws ConfigError (exit 2) for anything else, zero included.
 */
export function parseDuration(text: string): number {
  const match = /^(\d{1,12})([smhd]?)$/.exec(text.trim());
  const unit = match?.[2] ?? "";
  const seconds = match === null ? NaN : Number(match[1]) * (UNIT_SECONDS[unit === "" ? "s" : unit] ?? NaN);
  if (!Number.isSafeInteger(seconds) || seconds <= 0) {
    throw new ConfigError(`bad duration "${text}": use seconds or a number with s, m, h or d (30, 30s, 15m, 2h, 7d)`);
  }
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
