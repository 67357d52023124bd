/** Seconds per unit of a duration. */
const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** How a duration is written, for messages: whole seconds or a number with one unit. */
export const DURATION_FORMS = "seconds or a number with s, m, h or d (30, 30s, 15m, 2h, 7d)";

/**
 * Reads a duration as the CLI and the console take it (docs/cli.md,
 * docs/console.md): whole seconds (`30`) or a number with one unit, `30s`,
 * `15m`, `2h`, `7d`; spaces around it are ignored.
 * @returns the duration in seconds (a positive safe integer), or undefined
 *   for anything else, zero included. Throws nothing: each caller says why
 *   in its own way.
 */
export function durationSeconds(text: string): number | undefined {
  const match = /^(\d{1,12})([smhd]?)$/.exec(text.trim());
  if (match === null) return undefined;
  const seconds = Number(match[1]) * (UNIT_SECONDS[match[2] === "" || match[2] === undefined ? "s" : match[2]] ?? Number.NaN);
  return Number.isSafeInteger(seconds) && seconds > 0 ? seconds : undefined;
}
