import { loadConfig } from "../config.js";
import { parseServeFlags } from "./serve-flags.js";
import { version } from "../version.js";
import { topLevelUsage } from "./usage.js";

/**
 * `ephemeral-vault [serve] [flags]`: starts the vault. Flags win over the
 * environment (config.ts SETTINGS); a bad setting throws ConfigError before
 * the server modules (hono, better-sqlite3, pino) are imported, so it exits
 * within a second (decisions.md section 10).
 * @returns 0 for --help/--version; undefined once listening (the process then
 *   runs until SIGTERM/SIGINT).
 * @throws ConfigError for a bad flag or setting.
 */
export async function serveCommand(args: string[]): Promise<number | undefined> {
  if (args.includes("--help") || args.includes("-h")) {
    process.stdout.write(topLevelUsage());
    return 0;
  }
  if (args.includes("--version") || args.includes("-v")) {
    process.stdout.write(`${version}\n`);
    return 0;
  }
  const config = loadConfig(parseServeFlags(args), process.env);
  const [{ createLogger }, { startServer }] = await Promise.all([import("../log.js"), import("../server.js")]);
  const log = createLogger(config.logLevel);
  const server = await startServer(config, log, (line) => process.stderr.write(line + "\n"));
  process.stderr.write(`ephemeral-vault ${version} listening on ${server.url}\n`);
  const onSignal = (signal: NodeJS.Signals) => {
    log.info({ signal }, "stopping");
    server.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, "stop failed");
        process.exit(1);
      },
    );
  };
  process.once("SIGTERM", onSignal);
  process.once("SIGINT", onSignal);
  return undefined;
}
