import type { Command } from "commander";
import { ConfigError } from "../../config.js";
import type { ExitCode } from "../exit-codes.js";
import { withConnectionOptions } from "./connection.js";
import { injectionRequest, resolveInjection } from "./run.js";
import type { InjectionFlags } from "./run.js";

interface ExportFlags extends InjectionFlags {
  format: string;
  force?: boolean;
}

const FORMATS = ["dotenv", "json", "shell"] as const;
type Format = (typeof FORMATS)[number];

/**
 * `export [--format dotenv|json|shell] [--env NAME=KEY ...] [--prefix P --only NAMES]
 * [--env-file FILE ...] [--force]`: resolves the variables exactly as `run`
 * does (run-core.ts: only the names --only lists, no override, whole path segments, HEAD
 * before each read, each read counted) and writes them to stdout (docs/cli.md,
 * "export"). Refuses (exit 2, before anything is read) when stdout is a
 * terminal, unless `--force`.
 * @throws ConfigError (exit 2) for a bad format, a terminal stdout, or a
 *   value the dotenv format cannot hold.
 */
export function registerExport(program: Command, exit: ExitCode): void {
  withConnectionOptions(
    program
      .command("export")
      .description("write secrets as variables (dotenv, JSON or shell) to stdout, resolved as run does")
      .option("--format <format>", "dotenv (default), json or shell", "dotenv")
      .option("--env <NAME=KEY>", "set NAME to the secret KEY (repeatable); sets any name", (value: string, previous: string[]) => [...previous, value], [])
      .option("--prefix <prefix>", "the secrets under the path PREFIX/, named as run --prefix names them: those --only names")
      .option("--only <names>", "with --prefix: the variables it may set, comma-separated (repeatable); no others", (value: string, previous: string[]) => [...previous, value], [])
      .option("--env-file <file>", "a dotenv FILE whose vault://KEY values are read (repeatable)", (value: string, previous: string[]) => [...previous, value], [])
      .option("--quiet", "do not list the names --prefix set on stderr")
      .option("--force", "write even when stdout is a terminal"),
  )
    .addHelpText(
      "after",
      `
Each secret is checked to exist, then read once (the read counts and may burn it),
as with run. Names follow run's rules (docs/cli.md). The values are written to
stdout, so redirect it: a terminal is refused unless --force.

Formats:
  dotenv  NAME='value' (single quotes; \`value\` when it holds a ', then "value")
  json    {"NAME": "value", ...}
  shell   export NAME='value' ('\\'' for a quote inside), for eval or source

Examples:
  ephemeral-vault export --prefix prod --only DB_URL,API_KEY > .env
  ephemeral-vault export --format json --env DB_URL=prod/db_url > vars.json
  eval "$(ephemeral-vault export --format shell --prefix ci --only TOKEN)"`,
    )
    .action(async (flags: ExportFlags) => {
      const format = FORMATS.find((f) => f === flags.format);
      if (format === undefined) throw new ConfigError(`bad --format "${flags.format}": use dotenv, json or shell`);
      const request = injectionRequest(flags);
      if (process.stdout.isTTY && !flags.force) {
        throw new ConfigError("export writes secret values: redirect stdout to a file or a pipe, or pass --force to print them on this terminal");
      }
      const resolved = await resolveInjection(flags, exit, request, "export");
      if (resolved === undefined) return;
      process.stdout.write(formatVariables(resolved.values, format));
    });
}

/**
 * The variables as text in `format` (docs/cli.md, "export"): `dotenv` lines
 * the `dotenv` package (and `run --env-file`) read back exactly; `json` one
 * object; `shell` `export NAME='...'` lines, a `'` written as `'\''`.
 * @throws ConfigError (exit 2) naming the variable when a value holds `'`,
 *   `` ` `` and `"` (or `\n` text inside `"`), which no dotenv quoting keeps.
 */
export function formatVariables(values: ReadonlyMap<string, string>, format: Format): string {
  if (format === "json") return `${JSON.stringify(Object.fromEntries(values), null, 2)}\n`;
  let out = "";
  for (const [name, value] of values) {
    out += format === "shell" ? `export ${name}='${value.replace(/'/g, "'\\''")}'\n` : `${name}=${dotenvQuoted(name, value)}\n`;
  }
  return out;
}

/** A dotenv value, quoted so that dotenv's parse returns it unchanged. */
function dotenvQuoted(name: string, value: string): string {
  if (!value.includes("'")) return `'${value}'`;
  if (!value.includes("`")) return `\`${value}\``;
  if (!value.includes('"') && !/\\[nr]/.test(value)) return `"${value}"`;
  throw new ConfigError(`${name}: its value holds ', \` and " (or a \\n text): dotenv cannot hold it; use --format json or shell`);
}
