import { ConfigError } from "../config.js";

/** A name `run --prefix` derives that can be a variable: `[A-Z_][A-Z0-9_]*` (docs/cli.md, "run"). */
const ENV_NAME = /^[A-Z_][A-Z0-9_]*$/;

/**
 * Parses the `--only NAMES` lists of `run` and `export` (and `mcp
 * --allow-env`): comma- or space-separated variable names, each
 * `[A-Za-z_][A-Za-z0-9_]*`, repeatable (docs/cli.md, "What --prefix sets").
 * These are the operator's own names: the only ones a secret found under
 * `--prefix` may set, so no one who may write under the prefix chooses a
 * variable the operator did not name.
 * @param lists the flag's values as given.
 * @param flag the flag's name, for the error message.
 * @returns the names, or undefined when no list was given.
 * @throws ConfigError (exit 2) for a name that is not a variable name, or a list with no name.
 */
export function parseNameList(lists: readonly string[], flag = "--only"): Set<string> | undefined {
  if (lists.length === 0) return undefined;
  const names = new Set<string>();
  for (const list of lists) {
    const words = list.split(/[\s,]+/).filter((w) => w !== "");
    if (words.length === 0) throw new ConfigError(`bad ${flag} "${list}": name at least one variable, e.g. ${flag} DB_URL,API_KEY`);
    for (const word of words) {
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(word)) throw new ConfigError(`bad ${flag} name "${word}": a variable name is letters, digits and _, not starting with a digit`);
      names.add(word);
    }
  }
  return names;
}

/**
 * The prefix of `run --prefix P` as a whole path: P without its trailing
 * `/`s, then one `/` (`prod` and `prod/` both give `prod/`), so `prod` never
 * matches `prod2/...` or `production/...` (docs/cli.md, "run").
 * @throws ConfigError (exit 2) when nothing is left of P.
 */
export function prefixPath(prefix: string): string {
  const bare = prefix.replace(/\/+$/, "");
  if (bare === "") throw new ConfigError('bad --prefix: give a key path such as "prod" (secrets prod/...)');
  return `${bare}/`;
}

/**
 * The environment variable name for a secret listed by `run --prefix P`:
 * the key's rest after the whole path P (`prefixPath`), uppercased, every
 * character outside [A-Z0-9_] becoming `_` (`P/db_url` -> `DB_URL`,
 * `P/api-key` -> `API_KEY`, `P/sub/x` -> `SUB_X`).
 * @returns the name (which may still fail isEnvName, e.g. `1ABC`), or null
 * when the key is not under P or nothing is left after it.
 */
export function envNameFor(key: string, prefix: string): string | null {
  const path = prefixPath(prefix);
  if (!key.startsWith(path)) return null;
  const name = key.slice(path.length).toUpperCase().replace(/[^A-Z0-9_]/g, "_");
  return name === "" ? null : name;
}

/** True when a name derived by `run --prefix` is a variable name: `[A-Z_][A-Z0-9_]*`. */
export function isEnvName(name: string): boolean {
  return ENV_NAME.test(name);
}

/**
 * Parses one `--env NAME=KEY` mapping of `run`.
 * @returns the variable name and the secret key.
 * @throws ConfigError (exit 2) when NAME is not a valid variable name or KEY is empty.
 */
export function parseEnvMapping(text: string): { name: string; key: string } {
  const eq = text.indexOf("=");
  const name = eq < 0 ? "" : text.slice(0, eq);
  const key = eq < 0 ? "" : text.slice(eq + 1);
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) || key === "") {
    throw new ConfigError(`bad --env "${text}": use NAME=KEY, NAME a variable name (letters, digits, _)`);
  }
  return { name, key };
}
