import { ConfigError } from "../config.js";
import { envNameFor, isEnvName } from "./env-names.js";

/** A secret under `run --prefix` that was left out, and why (printed on stderr, never its value). */
export interface SkippedKey {
  key: string;
  name: string;
  reason: string;
}

/** What `run` will set: variable name -> secret key, and the prefix keys it left out. */
export interface RunPlan {
  names: Map<string, string>;
  skipped: SkippedKey[];
  /** Names `--only` lists that no key under the prefix (and no `--env`) sets. */
  missing: string[];
}

/**
 * Decides the variables of `run` (docs/cli.md, "What --prefix sets"). A
 * secret under `--prefix` sets a variable only when the operator named it:
 * its derived name is in `only` (`--only NAMES`) and not already set in
 * `env`; every other key under the prefix is skipped (and so never read).
 * Without `only`, `--prefix` sets nothing and the plan is refused, naming
 * the `--only` that would set what is there: a deny list of dangerous names
 * cannot be complete (MAKEFLAGS, CC, GOFLAGS, ...), so whoever may write
 * under the prefix must never choose a variable. An `--env NAME=KEY`
 * mapping sets any name, and wins over a `--prefix` name.
 * @param prefixKeys the keys found under the prefix (whole path segments).
 * @param prefix the `--prefix` flag, or undefined.
 * @param mappings the parsed `--env` mappings.
 * @param env the environment `run` was started with.
 * @param only the names `--only` lists (parseNameList), or undefined.
 * @param alsoNamed whether an env file names variables too: a `--prefix`
 *   without `--only` beside `--env` or a file sets nothing, and is not refused.
 * @returns the plan; a listed name no key sets is in `missing` (the caller refuses it).
 * @throws ConfigError (exit 2) when `--prefix` has keys but no `--only` and
 * nothing else is named; when two prefix keys map to one listed name, or two
 * `--env` mappings set the same name (naming both keys).
 */
export function planRun(
  prefixKeys: readonly string[],
  prefix: string | undefined,
  mappings: ReadonlyArray<{ name: string; key: string }>,
  env: NodeJS.ProcessEnv,
  only?: ReadonlySet<string>,
  alsoNamed = false,
): RunPlan {
  const explicit = new Map<string, string>();
  for (const { name, key } of mappings) {
    const earlier = explicit.get(name);
    if (earlier !== undefined && earlier !== key) throw new ConfigError(`--env sets ${name} twice: from ${earlier} and from ${key}`);
    explicit.set(name, key);
  }
  const derived = new Map<string, string>();
  const skipped: SkippedKey[] = [];
  for (const key of prefixKeys) {
    const name = prefix === undefined ? null : envNameFor(key, prefix);
    if (name === null) continue;
    if (only === undefined || !only.has(name)) {
      skipped.push({ key, name, reason: isEnvName(name) ? `${name} is not named by --only` : `${name} is not a variable name ([A-Z_][A-Z0-9_]*)` });
      continue;
    }
    const earlier = derived.get(name);
    if (earlier !== undefined) {
      throw new ConfigError(`${earlier} and ${key} both map to ${name}: use --env to name them, or rename one`);
    }
    derived.set(name, key);
  }
  if (prefix !== undefined && only === undefined && prefixKeys.length > 0 && explicit.size === 0 && !alsoNamed) {
    const found = [...new Set(skipped.filter((s) => isEnvName(s.name)).map((s) => s.name))].sort();
    throw new ConfigError(
      `--prefix ${prefix} sets only the variables you name: add --only ${found.length > 0 ? found.join(",") : "NAMES"}` +
        " (the names of the keys under it; a secret's writer never chooses a variable: docs/cli.md)",
    );
  }
  const names = new Map<string, string>();
  for (const [name, key] of derived) {
    if (explicit.has(name)) continue;
    if (env[name] !== undefined) skipped.push({ key, name, reason: `${name} is already set in the environment` });
    else names.set(name, key);
  }
  const missing = only === undefined ? [] : [...only].filter((name) => !derived.has(name) && !explicit.has(name));
  for (const [name, key] of explicit) names.set(name, key);
  return { names, skipped, missing };
}

/**
 * The child's environment: `env` without the runner's own connection
 * (VAULT_TOKEN, VAULT_TOKEN_FILE, VAULT_ADDR, VAULT_ORG) unless
 * `keepVaultEnv`, plus `values` (name -> secret value). A value set by name
 * in `values` always wins, so `--env VAULT_TOKEN=KEY` still sets it.
 */
export function childEnvironment(env: NodeJS.ProcessEnv, values: ReadonlyMap<string, string>, keepVaultEnv: boolean): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) {
    if (!keepVaultEnv && RUNNER_CONNECTION.has(name)) continue;
    out[name] = value;
  }
  for (const [name, value] of values) out[name] = value;
  return out;
}

/** The runner's connection variables, not passed to the child by default. */
const RUNNER_CONNECTION: ReadonlySet<string> = new Set(["VAULT_TOKEN", "VAULT_TOKEN_FILE", "VAULT_ADDR", "VAULT_ORG"]);
