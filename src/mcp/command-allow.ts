import { ConfigError } from "../config.js";

/** One `mcp --allow-command PATTERN`: its words, and whether it ends in `**` (any further arguments). */
export interface CommandPattern {
  text: string;
  words: RegExp[];
  rest: boolean;
}

/**
 * Parses an `--allow-command` PATTERN (docs/mcp.md, "run_command"): words
 * separated by spaces, matched one to one against the command's argv (no
 * shell, no PATH lookup in the match: `node` matches argv[0] `node`, not
 * `/usr/bin/node`). In a word, `*` matches any characters except `/`, and
 * `?` one character except `/`; every other character matches itself. A
 * last word `**` matches any number of further arguments (none included);
 * without it the argv must have exactly as many words. A wildcard never
 * matches an argument that starts with `-`, unless the pattern's word itself
 * starts with `-` (`--env=*`): options change what a command runs
 * (`npm run x --node-options=--import=...`), so each option the agent may
 * pass is written out by the operator.
 * @throws ConfigError (exit 2) for an empty pattern or `**` anywhere but last.
 */
export function parseCommandPattern(text: string): CommandPattern {
  const words = text.trim().split(/\s+/).filter((w) => w !== "");
  const rest = words[words.length - 1] === "**";
  if (rest) words.pop();
  if (words.length === 0) throw new ConfigError(`bad --allow-command "${text}": name at least the command, e.g. "npm test" or "node scripts/*.js **"`);
  if (words.includes("**")) throw new ConfigError(`bad --allow-command "${text}": ** may only be the last word`);
  return { text: text.trim(), words: words.map(globWord), rest };
}

/** True when `argv` matches the pattern (parseCommandPattern); no argument that `**` takes starts with `-`. */
export function commandAllowed(pattern: CommandPattern, argv: readonly string[]): boolean {
  if (pattern.rest ? argv.length < pattern.words.length : argv.length !== pattern.words.length) return false;
  if (!pattern.words.every((word, i) => word.test(argv[i] ?? ""))) return false;
  return argv.slice(pattern.words.length).every((arg) => !arg.startsWith("-"));
}

function globWord(word: string): RegExp {
  let source = "";
  for (const ch of word) {
    if (ch === "*") source += "[^/]*";
    else if (ch === "?") source += "[^/]";
    else source += ch.replace(/[\\^$.|+()[\]{}]/g, "\\$&");
  }
  // A word that does not start with "-" itself never lets a wildcard match an option.
  return new RegExp(word.startsWith("-") ? `^${source}$` : `^(?!-)${source}$`, "s");
}
