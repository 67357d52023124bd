import { CommanderError } from "commander";
import type { Command } from "commander";
import { ConfigError } from "../config.js";

/**
 * Parses a command's words with commander on a command that stands alone
 * (serve, and the operator commands called from code and tests): the one
 * argument parser of the command line (docs/cli.md). `--help` and
 * `--version` print to stdout.
 * @param command its arguments and options declared; its action, if any, is not run here.
 * @param words the words after the command's name.
 * @returns "shown" when help or the version was printed (exit 0), else "parsed":
 *   `command.opts()` and `command.processedArgs` hold the values.
 * @throws ConfigError with commander's message (`unknown option '--x'`) for a usage error (exit 2).
 */
export function parseWords(command: Command, words: string[]): "shown" | "parsed" {
  command.exitOverride().configureOutput({ writeErr: () => {}, outputError: () => {} });
  try {
    command.parse(words, { from: "user" });
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    if (err.exitCode === 0) return "shown";
    throw new ConfigError(err.message.replace(/^error: /, ""));
  }
  return "parsed";
}
