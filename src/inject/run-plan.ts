import { ConfigError } from "../config.js";
import { envNameFor, isDeniedEnvName, isEnvName } from "./env-names.js";

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
}

/**
 * Decides the variables of `run` (docs/cli.md, "run"). A name derived from
 * `--prefix` is set only when it matches `[A-Z_][A-Z0-9_]*`, is not on the
 * deny list (env-names.ts DENIED_ENV_NAMES) and is not already in `env`;
 * otherwise the key is skipped (and so never read). An `--env NAME=KEY`
 * mapping sets any name, and wins over a `--prefix` name.
 * @param prefixKeys the keys found under the prefix (whole path segments).
 * @param prefix the `--prefix` flag, or undefined.
 * @param mappings the parsed `--env` mappings.
 * @param env the environment `run` was started with.
 * @throws ConfigError (exit 2) when two prefix keys map to one name, or two
 * `--env` mappings set the same name (naming both keys).
 */
export function planRun(
  prefixKeys: readonly string[],
  prefix: string | undefined,
  mappings: ReadonlyArray<{ name: string; key: string }>,
  env: NodeJS.ProcessEnv,
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
    const earlier = derived.get(name);
    if (earlier !== undefined) {
      throw new ConfigError(`${earlier} and ${key} both map to ${name}: use --env to name them, or rename one`);
    }
    derived.set(name, key);
  }
  const names = new Map<string, string>();
  for (const [name, key] of derived) {
    if (explicit.has(name)) continue;
    const reason = !isEnvName(name)
      ? `${name} is not a variable name ([A-Z_][A-Z0-9_]*)`
      : isDeniedEnvName(name)
        ? `${name} is on the deny list of loader, shell and interpreter variables`
        : env[name] !== undefined
          ? `${name} is already set in the environment`
          : undefined;
    if (reason === undefined) names.set(name, key);
    else skipped.push({ key, name, reason });
  }
  for (const [name, key] of explicit) names.set(name, key);
  return { names, skipped };
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
