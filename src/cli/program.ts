import { Command, CommanderError } from "commander";
import { version } from "../version.js";
import { EXIT_OK, EXIT_USAGE } from "./exit-codes.js";
import type { CommandEntry, ExitCode } from "./registry.js";

/**
 * Parses and runs one registered command with commander. Usage errors
 * (unknown option, missing argument) print `ephemeral-vault: ...` and give 2;
 * `--help` prints the command's help with examples and gives 0; a command
 * group without a subcommand (`keys`) prints its help on stderr and gives 2.
 * @param entry the command (cli/registry.ts); its module is loaded here.
 * @param args the words after the command name.
 * @returns the exit code the action left.
 * @throws ConfigError for usage errors found by the action (main prints it, exit 2)
 *   and whatever else the action throws.
 */
export async function runCommandLine(entry: CommandEntry, args: string[]): Promise<number> {
  const program = new Command("ephemeral-vault")
    .version(version, "-v, --version")
    .enablePositionalOptions()
    .exitOverride()
    .configureOutput({ outputError: (text, write) => write(`ephemeral-vault: ${text.replace(/^error: /, "")}`) })
    .showHelpAfterError(`(see: ephemeral-vault ${entry.name} --help)`);
  const exit: ExitCode = { code: EXIT_OK };
  const { register } = await entry.load();
  register(program, exit);
  try {
    await program.parseAsync([entry.name, ...args], { from: "user" });
  } catch (err) {
    if (err instanceof CommanderError) {
      // A group without its subcommand (`keys`) shows its help on stderr with exit code 1: a usage error.
      const help = err.code === "commander.helpDisplayed" || err.code === "commander.help" || err.code === "commander.version";
      return help && err.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
    }
    throw err;
  }
  return exit.code;
}
