import { ConfigError } from "./config.js";
import { EXIT_OK, EXIT_USAGE } from "./cli/exit-codes.js";
import { COMMANDS } from "./cli/registry.js";
import { serveCommand } from "./cli/admin/serve.js";
import { topLevelUsage } from "./cli/usage.js";
import { version } from "./version.js";
// The server, the logger, commander, the HTTP client and the MCP SDK are
// imported only by the command that needs them: a bad setting stops `serve`
// within a second (docs/contract.md §15) and the start stays fast.

/**
 * A closed stdout (`ephemeral-vault ls | head -1`) ends the command quietly
 * with exit 0 instead of an EPIPE stack (docs/cli.md, "Exit codes and
 * errors"); any other stdout error still surfaces, and a command with its
 * own listener (`run`, whose masked pipe closes the child's end) handles it.
 */
function endQuietlyWhenStdoutCloses(): void {
  if (process.stdout.listenerCount("error") > 0) return;
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    // A command that handles its own stdout errors (run's masked pipe passes SIGPIPE on to its child) keeps doing so.
    if (process.stdout.listenerCount("error") > 1) return;
    if (err.code === "EPIPE") process.exit(0);
    throw err;
  });
}

/**
 * The command line: serve (default, also when the first word is a flag),
 * the commands of cli/registry.ts, --help, --version.
 * @param argv the words after the program name.
 * @returns the exit code for commands that finish; undefined for commands that
 *   keep running (serve once listening, mcp, run until its child ends).
 */
export async function main(argv: string[]): Promise<number | undefined> {
  endQuietlyWhenStdoutCloses();
  const [first, ...rest] = argv;
  if (first === "--help" || first === "-h" || first === "help") {
    process.stdout.write(topLevelUsage());
    return EXIT_OK;
  }
  if (first === "--version" || first === "-v") {
    process.stdout.write(`${version}\n`);
    return EXIT_OK;
  }
  try {
    if (first === "serve") return await serveCommand(rest);
    if (first === undefined || first.startsWith("-")) return await serveCommand(argv);
    const entry = COMMANDS.find((c) => c.name === first);
    if (entry === undefined) throw new ConfigError(`unknown command "${first}"; see ephemeral-vault --help`);
    const { runCommandLine } = await import("./cli/program.js");
    return await runCommandLine(entry, rest);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`ephemeral-vault: ${err.message}\n`);
      return EXIT_USAGE;
    }
    throw err;
  }
}
