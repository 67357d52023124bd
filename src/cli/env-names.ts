import { ConfigError } from "../config.js";

/**
 * The environment variable name for a secret listed by `run --prefix P`:
 * strip P and one leading `/`, uppercase, every character outside [A-Z0-9_]
 * becomes `_` (`P/db_url` -> `DB_URL`, `P/api-key` -> `API_KEY`).
 * @returns the name, or null when nothing is left after the prefix.
 */
export function envNameFor(key: string, prefix: string): string | null {
  const rest = key.startsWith(prefix) ? key.slice(prefix.length) : key;
  const name = rest.replace(/^\//, "").toUpperCase().replace(/[^A-Z0-9_]/g, "_");
  return name === "" ? null : name;
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
