import { parseServeArgs } from "../../src/cli/admin/serve-flags.js";
import { ConfigError, loadConfig } from "../../src/config.js";
import { expect } from "vitest";

// loadConfig as the serve command calls it, for the config tests.

export const HEX_KEY = "11".repeat(32);
export const HEX_KEY_2 = "22".repeat(32);

/** The serve command's flags, parsed by commander as the command does. */
export function parseServeFlags(args: string[]): Record<string, string | boolean | undefined> {
  const parsed = parseServeArgs(args);
  if (parsed === undefined) throw new Error("--help or --version printed");
  return parsed.flags;
}

/** loadConfig from command-line arguments and an environment, as the command does. */
export function config(args: string[] = [], env: Record<string, string | undefined> = {}) {
  return loadConfig(parseServeFlags(args), env);
}

/** The ConfigError config() throws for these arguments and environment; fails the test when it throws none. */
export function configError(args: string[], env: Record<string, string | undefined>): ConfigError {
  try {
    config(args, env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error(`expected a ConfigError for ${JSON.stringify({ args, env })}`);
}
