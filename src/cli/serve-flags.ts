import { parseArgs } from "node:util";
import { ConfigError, SETTINGS, flagName } from "../config.js";

// The serve command's flags: one per setting of config.ts SETTINGS, named
// after its first variable (docs/contract.md §3: flags win over the
// environment; loadConfig applies them).

/**
 * The flags of the serve command, for util.parseArgs. Every flag takes a
 * value; a boolean flag given bare is rewritten to `--flag=true` first
 * (booleanFlagsWithValues).
 */
export function serveFlagOptions(): Record<string, { type: "string" }> {
  const options: Record<string, { type: "string" }> = {};
  for (const setting of Object.values(SETTINGS)) options[flagName(setting)] = { type: "string" };
  return options;
}

/**
 * A boolean setting's flag takes the values of its variable (docs/contract.md
 * §3: a flag of the same name): `--trust-proxy`, `--trust-proxy=false`
 * and `--trust-proxy true` all work. Rewrites the bare and the spaced forms to
 * `--flag=value`; other arguments pass unchanged (up to a `--`).
 */
function booleanFlagsWithValues(argv: string[]): string[] {
  const booleans = new Set(Object.values(SETTINGS).filter((s) => s.kind === "boolean").map(flagName));
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === "--") {
      out.push(...argv.slice(i));
      break;
    }
    const name = arg.startsWith("--") ? arg.slice(2) : undefined;
    if (name === undefined || !booleans.has(name)) {
      out.push(arg);
      continue;
    }
    const next = argv[i + 1];
    // The next word is this flag's value unless it is another flag
    // (`--trust-proxy maybe` is then refused as a bad VAULT_TRUST_PROXY).
    if (next !== undefined && !next.startsWith("-")) {
      out.push(`--${name}=${next}`);
      i++;
    } else {
      out.push(`--${name}=true`);
    }
  }
  return out;
}

/**
 * Parses the serve command's arguments.
 * @throws ConfigError for an unknown flag or a flag missing its value.
 */
export function parseServeFlags(argv: string[]): Record<string, string | boolean | undefined> {
  try {
    const { values } = parseArgs({
      args: booleanFlagsWithValues(argv),
      options: serveFlagOptions(),
      strict: true,
      allowPositionals: false,
    });
    return values;
  } catch (err) {
    throw new ConfigError(err instanceof Error ? err.message : String(err));
  }
}
