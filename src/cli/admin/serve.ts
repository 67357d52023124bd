import { loadConfig } from "../../config.js";
import { parseServeArgs } from "./serve-flags.js";
import { version } from "../../version.js";
import { EXIT_FAILED, EXIT_OK } from "../exit-codes.js";

/**
 * `ephemeral-vault [serve] [flags]`: starts the vault. Flags win over the
 * environment (config/settings.ts); a bad setting throws ConfigError before
 * the server modules (hono, better-sqlite3, pino) are imported, so it exits
 * within a second (docs/configuration.md).
 * @returns 0 for --help/--version; undefined once listening (the process then
 *   runs until SIGTERM/SIGINT; with TLS from files, SIGHUP reloads the certificate;
 *   with ACME it logs that there is nothing to reload and goes on).
 * @throws ConfigError for a bad flag or setting.
 */
export async function serveCommand(args: string[]): Promise<number | undefined> {
  const parsed = parseServeArgs(args);
  if (parsed === undefined) return EXIT_OK;
  const { printUrlJson } = parsed;
  const config = loadConfig(parsed.flags, process.env);
  const [{ createLogger }, { startServer }] = await Promise.all([import("../../log/log.js"), import("../../assembly/server.js")]);
  // With --print-url-json stdout carries that one line only: the log goes to stderr.
  const log = createLogger(config.logLevel, printUrlJson ? { write: (line: string) => void process.stderr.write(line) } : undefined);
  const server = await startServer(config, log, (line) => process.stderr.write(line + "\n"));
  const onSignal = (signal: NodeJS.Signals) => {
    log.info({ signal }, "stopping");
    server.stop().then(
      () => process.exit(EXIT_OK),
      (err: unknown) => {
        log.error({ err }, "stop failed");
        process.exit(EXIT_FAILED);
      },
    );
  };
  process.once("SIGTERM", onSignal);
  process.once("SIGINT", onSignal);
  // With TLS, SIGHUP reads the certificate and key again (docs/deploy.md, "The executable alone, on HTTPS"); without, it stops as before.
  // With ACME there are no files to read again: SIGHUP (a `systemctl reload`) is answered with a log line, and the vault keeps serving.
  const reloadTls = server.reloadTls;
  if (reloadTls !== undefined) {
    process.on("SIGHUP", () => {
      // A change or a refusal logs itself (http/tls/file-source.ts); say so when there is nothing new.
      if (reloadTls() === "unchanged") log.info({ signal: "SIGHUP" }, "TLS certificate unchanged: the files hold the pair already served");
    });
  } else if (config.acmeDomains !== undefined) {
    process.on("SIGHUP", () => log.info({ signal: "SIGHUP" }, "nothing to reload: certificates by ACME are renewed by the vault itself"));
  }
  // Announced only once the signals are handled: a program that stops the vault
  // as soon as it reads the line must get the graceful stop (exit 0), not the default kill.
  process.stderr.write(`ephemeral-vault ${version} listening on ${server.url}\n`);
  if (printUrlJson) process.stdout.write(`${JSON.stringify({ url: server.url, token: server.masterKey })}\n`);
  return undefined;
}
