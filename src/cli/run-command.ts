import { spawn } from "node:child_process";
import { constants } from "node:os";
import type { Command } from "commander";
import { ConfigError } from "../config.js";
import { VaultApiError } from "../client/index.js";
import type { VaultClient } from "../client/index.js";
import { callVault } from "./client-call.js";
import type { ConnectionFlags } from "./connection.js";
import { withConnectionOptions } from "./connection.js";
import { parseEnvMapping, prefixPath } from "./env-names.js";
import type { ExitCode } from "./registry.js";
import { childEnvironment, planRun } from "./run-plan.js";
import type { RunPlan } from "./run-plan.js";

/** Exit code when COMMAND cannot be started (as a shell does for "not found"). */
export const EXIT_CANNOT_START = 127;

interface RunFlags extends ConnectionFlags {
  env: string[];
  prefix?: string;
  keepVaultEnv?: boolean;
  quiet?: boolean;
}

/**
 * `run [--env NAME=KEY ...] [--prefix P] -- COMMAND [ARGS...]`: checks that
 * every named secret exists (HEAD, no read counted), reads each once, then
 * starts COMMAND (stdio inherited) with them added to its environment,
 * forwards SIGINT/SIGTERM to it and exits with its exit code (128 + the
 * signal number when it died of a signal). Names from `--prefix` follow
 * run-plan.ts planRun (whole path segments, no deny-listed or already-set
 * name); the runner's VAULT_TOKEN, VAULT_ADDR and VAULT_ORG are not passed
 * on unless `--keep-vault-env` (docs/cli.md, "run"). Nothing is read or
 * started when a check fails (exit 1 or 2).
 */
export function registerRun(program: Command, exit: ExitCode): void {
  withConnectionOptions(
    program
      .command("run")
      .description("start COMMAND with secrets added to its environment; prints only COMMAND's own output")
      .argument("<command...>", "the command and its arguments (after --)")
      .option("--env <NAME=KEY>", "set NAME to the secret KEY (repeatable); sets any name", (value: string, previous: string[]) => [...previous, value], [])
      .option("--prefix <prefix>", "every secret under the path PREFIX/, named after the rest of its key (prod/db_url -> DB_URL)")
      .option("--keep-vault-env", "pass this command's VAULT_TOKEN, VAULT_ADDR and VAULT_ORG on to COMMAND (default: removed)")
      .option("--quiet", "do not list the names --prefix set on stderr")
      .passThroughOptions(),
  )
    .addHelpText(
      "after",
      `
Each secret is read once (a read counts, and may burn it) before COMMAND starts;
every one is checked to exist first, so a missing one burns nothing.
With --prefix, the secrets under PREFIX/ (whole path segments: prod never
matches prod2/) are named after the rest of the key, uppercased, every
character outside A-Z, 0-9 and _ turned into _: prod/db-url -> DB_URL. A name
that is not [A-Z_][A-Z0-9_]*, is already set, or is on the deny list of loader,
shell and interpreter variables (PATH, BASH_ENV, LD_*, NODE_*, PYTHON*, ...:
docs/cli.md) is skipped, and said so on stderr; --env NAME=KEY sets any name.
COMMAND does not get VAULT_TOKEN, VAULT_ADDR or VAULT_ORG unless --keep-vault-env.

Examples:
  ephemeral-vault run --env DATABASE_URL=prod/db_url -- node server.js
  ephemeral-vault run --prefix prod -- ./deploy.sh --fast
  ephemeral-vault run --env TOKEN=ci/token --env KEY=ci/key -- sh -c 'make release'

Exit codes: COMMAND's own (128 + N when it died of signal N); 1 the API refused a check
or a read, or no secret is under PREFIX; 2 usage error (two keys for one name) or vault
not reachable; ${EXIT_CANNOT_START} COMMAND could not be started.`,
    )
    .action(async (command: string[], flags: RunFlags) => {
      const mappings = flags.env.map(parseEnvMapping);
      if (mappings.length === 0 && flags.prefix === undefined) throw new ConfigError("run needs --env NAME=KEY or --prefix P");
      const path = flags.prefix === undefined ? undefined : prefixPath(flags.prefix);
      const [file, ...args] = command;
      if (file === undefined) throw new ConfigError("run needs a COMMAND after --");
      let values: Map<string, string> | undefined;
      await callVault(flags, exit, async (client) => {
        const prefixKeys = path === undefined ? [] : await keysUnder(client, path);
        if (path !== undefined && prefixKeys.length === 0) {
          if (mappings.length === 0) throw new VaultApiError(404, `no secret under ${path}`, undefined, `GET /secrets?prefix=${path}`);
          process.stderr.write(`ephemeral-vault run: no secret under ${path}\n`);
        }
        const plan = planRun(prefixKeys, flags.prefix, mappings, process.env);
        values = await readPlanned(client, plan.names);
        // Said once every read succeeded, right before COMMAND starts: names and keys, never values.
        if (path !== undefined && !flags.quiet) report(plan);
      });
      if (values === undefined) return;
      exit.code = await runChild(file, args, childEnvironment(process.env, values, flags.keepVaultEnv === true));
    });
}

/** The keys of every keyed secret under `path` (`P/`), all pages. */
async function keysUnder(client: VaultClient, path: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.list({ prefix: path, ...(cursor === undefined ? {} : { cursor }) });
    for (const entry of page.secrets) {
      if ("key" in entry && typeof entry.key === "string" && entry.key.startsWith(path)) keys.push(entry.key);
    }
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
  return keys;
}

/** One stderr line for the names set and one per key skipped: names and keys, never values. */
function report(plan: RunPlan): void {
  for (const { key, name, reason } of plan.skipped) {
    process.stderr.write(`ephemeral-vault run: skipped ${key}: ${reason}; --env ${name}=${key} sets it explicitly\n`);
  }
  if (plan.names.size > 0) process.stderr.write(`ephemeral-vault run: set ${[...plan.names.keys()].join(", ")}\n`);
}

/**
 * Checks that every planned key exists (HEAD: nothing read, nothing
 * counted), then reads each distinct key once.
 * @returns name -> value.
 * @throws VaultApiError naming the key that is missing or refused.
 */
async function readPlanned(client: VaultClient, names: ReadonlyMap<string, string>): Promise<Map<string, string>> {
  const keys = [...new Set(names.values())];
  for (const key of keys) {
    const found = await namingKey(key, () => client.exists(key));
    if (!found) throw new VaultApiError(404, `${key}: secret not found`, undefined, `HEAD ${key}`);
  }
  const byKey = new Map<string, string>();
  for (const key of keys) byKey.set(key, (await namingKey(key, () => client.get(key))).value);
  const values = new Map<string, string>();
  for (const [name, key] of names) values.set(name, byKey.get(key) ?? "");
  return values;
}

/** Runs `call`, prefixing the key to the message of an API refusal. */
async function namingKey<T>(key: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof VaultApiError) throw new VaultApiError(err.status, `${key}: ${err.error}`, err.message === err.error ? undefined : err.message, err.request);
    throw err;
  }
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
