import { loadConfig } from "../config.js";
import { parseServeFlags } from "./serve-flags.js";
import { version } from "../version.js";
import { topLevelUsage } from "./usage.js";

/**
 * `--print-url-json`: once listening, print `{"url": ..., "token": ...}` (the
 * master key) as one line on stdout, for a program that starts the vault
 * and talks to it (docs/embedding.md); the log then goes to stderr.
 */
export const PRINT_URL_JSON = "--print-url-json";

/**
 * `ephemeral-vault [serve] [flags]`: starts the vault. Flags win over the
 * environment (config.ts SETTINGS); a bad setting throws ConfigError before
 * the server modules (hono, better-sqlite3, pino) are imported, so it exits
 * within a second (docs/contract.md §15).
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
  // Not a setting: how the start is reported, so it is taken out before the settings' flags.
  const printUrlJson = args.includes(PRINT_URL_JSON);
  const config = loadConfig(parseServeFlags(args.filter((a) => a !== PRINT_URL_JSON)), process.env);
  const [{ createLogger }, { startServer }] = await Promise.all([import("../ops/log.js"), import("../server.js")]);
  // With --print-url-json stdout carries that one line only: the log goes to stderr.
  const log = createLogger(config.logLevel, printUrlJson ? { write: (line: string) => void process.stderr.write(line) } : undefined);
  const server = await startServer(config, log, (line) => process.stderr.write(line + "\n"));
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
  // Announced only once the signals are handled: a program that stops the vault
  // as soon as it reads the line must get the graceful stop (exit 0), not the default kill.
  process.stderr.write(`ephemeral-vault ${version} listening on ${server.url}\n`);
  if (printUrlJson) process.stdout.write(`${JSON.stringify({ url: server.url, token: server.masterKey })}\n`);
  return undefined;
}
