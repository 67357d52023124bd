import { Command, Option } from "commander";
import { SETTINGS } from "../../config.js";
import { version } from "../../version.js";
import { parseWords } from "../parse-words.js";
import { topLevelUsage } from "../usage.js";

// The serve command's flags: one per row of the settings table
// (config/settings.ts), named after its first variable; a flag wins over the
// environment (docs/configuration.md), which loadConfig applies.

/**
 * `--print-url-json`: once listening, print `{"url": ..., "token": ...}` (the
 * master key) as one line on stdout, for a program that starts the vault
 * and talks to it (docs/embedding.md); the log then goes to stderr.
 */
export const PRINT_URL_JSON = "--print-url-json";

/** What the serve command was given: the settings' flags by name, and whether to print the url as JSON. */
export interface ServeArgs {
  flags: Record<string, string | boolean | undefined>;
  printUrlJson: boolean;
}

/**
 * The serve command for commander: an option per setting (a boolean one
 * bare, `--trust-proxy`, or with the values of its variable, `--trust-proxy
 * false`), `--print-url-json`, no positionals. Its `--help` is the top-level
 * usage.
 */
export function serveCommandLine(): Command {
  const command = new Command("serve")
    .helpOption("-h, --help", "show this help")
    .version(version, "-v, --version")
    .configureHelp({ formatHelp: () => topLevelUsage() })
    .allowExcessArguments(false);
  for (const setting of Object.values(SETTINGS)) {
    command.addOption(new Option(setting.kind === "boolean" ? `--${setting.flag} [value]` : `--${setting.flag} <value>`, setting.help));
  }
  return command.option(PRINT_URL_JSON, "once listening, print {url, token} as one line on stdout");
}

/**
 * Parses the serve command's words (commander).
 * @returns undefined when `--help` or `--version` was printed (exit 0).
 * @throws ConfigError for an unknown flag, a flag missing its value or a positional (exit 2).
 */
export function parseServeArgs(words: string[]): ServeArgs | undefined {
  const command = serveCommandLine();
  if (parseWords(command, words) === "shown") return undefined;
  const flags: Record<string, string | boolean | undefined> = {};
  for (const option of command.options) {
    const given: unknown = command.getOptionValue(option.attributeName());
    if (typeof given === "string" || typeof given === "boolean") flags[option.long?.slice(2) ?? option.attributeName()] = given;
  }
  const printUrlJson = flags[PRINT_URL_JSON.slice(2)] === true;
  delete flags[PRINT_URL_JSON.slice(2)];
  return { flags, printUrlJson };
}
