import { ConfigError } from "../config.js";

/** A name `run --prefix` may set: `[A-Z_][A-Z0-9_]*` (docs/cli.md, "run"). */
const ENV_NAME = /^[A-Z_][A-Z0-9_]*$/;

/**
 * Names `run --prefix` never sets, whatever a secret under the prefix is
 * called (docs/cli.md, "What --prefix never sets"): variables that make a
 * shell, a dynamic loader or an interpreter load or run code, or that
 * redirect where programs look for commands, certificates, configuration or
 * a proxy. A secret's writer is not trusted to choose them; `--env NAME=KEY`
 * is the operator's explicit way to set one.
 */
export const DENIED_ENV_NAMES: ReadonlySet<string> = new Set([
  "PATH", "IFS", "ENV", "BASH_ENV", "CDPATH", "GLOBIGNORE", "SHELLOPTS", "BASHOPTS",
  "PS1", "PS2", "PS3", "PS4", "PROMPT_COMMAND", "HOME", "SHELL", "ZDOTDIR", "INPUTRC", "TMPDIR",
  "EDITOR", "VISUAL", "PAGER", "MANPAGER", "BROWSER", "SSH_ASKPASS", "SUDO_ASKPASS", "SSH_AUTH_SOCK",
  "CLASSPATH", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS",
  "RUBYOPT", "RUBYLIB", "GEM_HOME", "GEM_PATH",
  "GCONV_PATH", "LOCPATH", "NLSPATH", "HOSTALIASES", "RESOLV_HOST_CONF", "TZDIR",
  "SSL_CERT_FILE", "SSL_CERT_DIR", "CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE",
  "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY",
]);

/** Name prefixes `run --prefix` never sets (see DENIED_ENV_NAMES). */
export const DENIED_ENV_PREFIXES: readonly string[] = [
  "LD_", "DYLD_", "NODE_", "NPM_CONFIG_", "PYTHON", "PERL", "RUBY", "GIT_", "BASH_FUNC_", "VAULT_", "XDG_", "MALLOC_", "GLIBC_",
];

/** True when `name` is on the deny list of `run --prefix` (DENIED_ENV_NAMES, DENIED_ENV_PREFIXES). */
export function isDeniedEnvName(name: string): boolean {
  return DENIED_ENV_NAMES.has(name) || DENIED_ENV_PREFIXES.some((prefix) => name.startsWith(prefix));
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

/** True when `name` may be set by `run --prefix`: `[A-Z_][A-Z0-9_]*`. */
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
