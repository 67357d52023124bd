import { spawn } from "node:child_process";
import { constants } from "node:os";
import type { Command } from "commander";
import { ConfigError } from "../config.js";
import type { VaultClient } from "../client/index.js";
import { callVault } from "./client-call.js";
import type { ConnectionFlags } from "./connection.js";
import { withConnectionOptions } from "./connection.js";
import { envNameFor, parseEnvMapping } from "./env-names.js";
import type { ExitCode } from "./registry.js";

/** Exit code when COMMAND cannot be started (as a shell does for "not found"). */
export const EXIT_CANNOT_START = 127;

interface RunFlags extends ConnectionFlags {
  env: string[];
  prefix?: string;
}

/**
 * `run [--env NAME=KEY ...] [--prefix P] -- COMMAND [ARGS...]`: reads each
 * named secret once, then starts COMMAND (stdio inherited) with them added to
 * its environment, forwards SIGINT/SIGTERM to it and exits with its exit code
 * (128 + the signal number when it died of a signal). Nothing is started when
 * a read fails (exit 1 or 2).
 */
export function registerRun(program: Command, exit: ExitCode): void {
  withConnectionOptions(
    program
      .command("run")
      .description("start COMMAND with secrets added to its environment; prints only COMMAND's own output")
      .argument("<command...>", "the command and its arguments (after --)")
      .option("--env <NAME=KEY>", "set NAME to the secret KEY (repeatable)", (value: string, previous: string[]) => [...previous, value], [])
      .option("--prefix <prefix>", "every secret under PREFIX, named after the rest of its key (prod/db_url -> DB_URL)")
      .passThroughOptions(),
  )
    .addHelpText(
      "after",
      `
Each secret is read once (a read counts, and may burn it) before COMMAND starts.
With --prefix, a key's name after PREFIX and one "/" is uppercased and every
character outside A-Z, 0-9 and _ becomes _: prod/db-url -> DB_URL.

Examples:
  ephemeral-vault run --env DATABASE_URL=prod/db_url -- node server.js
  ephemeral-vault run --prefix prod -- ./deploy.sh --fast
  ephemeral-vault run --env TOKEN=ci/token --env KEY=ci/key -- sh -c 'make release'

Exit codes: COMMAND's own (128 + N when it died of signal N); 1 the API refused a read;
2 usage error or vault not reachable; ${EXIT_CANNOT_START} COMMAND could not be started.`,
    )
    .action(async (command: string[], flags: RunFlags) => {
      const mappings = flags.env.map(parseEnvMapping);
      if (mappings.length === 0 && flags.prefix === undefined) throw new ConfigError("run needs --env NAME=KEY or --prefix P");
      const [file, ...args] = command;
      if (file === undefined) throw new ConfigError("run needs a COMMAND after --");
      let secrets: Record<string, string> | undefined;
      await callVault(flags, exit, async (client) => {
        secrets = await readSecrets(client, mappings, flags.prefix);
      });
      if (secrets === undefined) return;
      exit.code = await runChild(file, args, { ...process.env, ...secrets });
    });
}

/** Reads every mapped secret and every secret under `prefix` once; --env wins on a name clash. */
async function readSecrets(
  client: VaultClient,
  mappings: Array<{ name: string; key: string }>,
  prefix: string | undefined,
): Promise<Record<string, string>> {
  const wanted = new Map<string, string>();
  if (prefix !== undefined) {
    let cursor: string | undefined;
    do {
      const page = await client.list({ prefix, ...(cursor === undefined ? {} : { cursor }) });
      for (const entry of page.secrets) {
        const key = "key" in entry && typeof entry.key === "string" ? entry.key : undefined;
        const name = key === undefined || !key.startsWith(prefix) ? null : envNameFor(key, prefix);
        if (key !== undefined && name !== null) wanted.set(name, key);
      }
      cursor = page.next_cursor ?? undefined;
    } while (cursor !== undefined);
  }
  for (const { name, key } of mappings) wanted.set(name, key);
  const env: Record<string, string> = {};
  for (const [name, key] of wanted) env[name] = (await client.get(key)).value;
  return env;
}

/**
 * Starts the child with inherited stdio, forwards SIGINT/SIGTERM while it
 * runs. @returns its exit code, 128 + signal number, or EXIT_CANNOT_START.
 */
function runChild(file: string, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(file, args, { stdio: "inherit", env });
    const forward = (signal: NodeJS.Signals) => {
      child.kill(signal);
    };
    process.on("SIGINT", forward);
    process.on("SIGTERM", forward);
    const done = (code: number) => {
      process.off("SIGINT", forward);
      process.off("SIGTERM", forward);
      resolve(code);
    };
    child.once("error", (err: NodeJS.ErrnoException) => {
      process.stderr.write(`ephemeral-vault: cannot start ${file}: ${err.code ?? err.message}\n`);
      done(EXIT_CANNOT_START);
    });
    child.once("exit", (code, signal) => {
      if (code !== null) done(code);
      else done(128 + (signal === null ? 0 : (constants.signals[signal] ?? 0)));
    });
  });
}
