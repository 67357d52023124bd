import type { Command } from "commander";
import { ConfigError } from "../../config.js";
import { VaultClient } from "@ephemeral-vault/client";
import { callVault } from "./call.js";
import type { Connection, ConnectionFlags } from "./connection.js";
import { withConnectionOptions } from "./connection.js";
import { readEnvFile } from "./env-file.js";
import { parseEnvMapping, parseNameList } from "../../inject/env-names.js";
import { Masker } from "../../inject/mask.js";
import type { ExitCode } from "../exit-codes.js";
import { EXIT_CANNOT_START } from "../exit-codes.js";
import { runInherited } from "../../inject/run-child.js";
import { planInjection, readSecrets, scopedClients } from "../../inject/run-core.js";
import type { Injection, InjectionRequest, SecretRef } from "../../inject/run-core.js";
import { childEnvironment } from "../../inject/run-plan.js";
import type { RunPlan } from "../../inject/run-plan.js";
import { cliFetch } from "./ca-fetch.js";

interface RunFlags extends InjectionFlags {
  keepVaultEnv?: boolean;
  mask?: boolean;
}

/**
 * `run [--env NAME=KEY ...] [--prefix P] [--env-file FILE ...] [--mask |
 * --no-mask] -- COMMAND [ARGS...]`: checks that every named secret exists
 * (HEAD, no read counted), reads each once, then starts COMMAND with them
 * added to its environment, forwards SIGINT/SIGTERM to it and exits with its
 * exit code (128 + the signal number when it died of a signal). Names from
 * `--prefix` follow run-plan.ts planRun (whole path segments, only the
 * names `--only` lists, never one already set); an env file's `vault://` references are
 * resolved like `--env` (env-file.ts); the runner's VAULT_TOKEN, VAULT_ADDR
 * and VAULT_ORG are not passed on unless `--keep-vault-env`. With masking
 * (`--mask`; by default for each of stdout and stderr that is not a
 * terminal) every injected secret value and its encodings become
 * `<masked:NAME>` in COMMAND's output (mask.ts; docs/cli.md, "run").
 * Nothing is read or started when a check fails (exit 1 or 2).
 */
export function registerRun(program: Command, exit: ExitCode): void {
  withConnectionOptions(
    program
      .command("run")
      .description("start COMMAND with secrets added to its environment; prints only COMMAND's own output")
      .argument("<command...>", "the command and its arguments (after --)")
      .option("--env <NAME=KEY>", "set NAME to the secret KEY (repeatable); sets any name", (value: string, previous: string[]) => [...previous, value], [])
      .option("--prefix <prefix>", "the secrets under the path PREFIX/, named after the rest of their key (prod/db_url -> DB_URL): those --only names")
      .option("--only <names>", "with --prefix: the variables it may set, comma-separated (repeatable), e.g. DB_URL,API_KEY; no others", (value: string, previous: string[]) => [...previous, value], [])
      .option("--keep-vault-env", "pass this command's VAULT_TOKEN, VAULT_ADDR and VAULT_ORG on to COMMAND (default: removed)")
      .option("--env-file <file>", "a dotenv FILE: NAME=vault://KEY (or vault://org/ORG_ID/KEY) reads a secret, other values pass through (repeatable)", (value: string, previous: string[]) => [...previous, value], [])
      .option("--quiet", "do not list the names --prefix set on stderr")
      .option("--mask", "mask injected values in COMMAND's stdout and stderr (default: for each that is not a terminal)")
      .option("--no-mask", "never mask COMMAND's output")
      .passThroughOptions(),
  )
    .addHelpText(
      "after",
      `
Each secret is read once (a read counts, and may burn it) before COMMAND starts;
every one is checked to exist first, so a missing one burns nothing.
With --prefix, the secrets under PREFIX/ (whole path segments: prod never
matches prod2/) are named after the rest of the key, uppercased, every
character outside A-Z, 0-9 and _ turned into _: prod/db-url -> DB_URL. Only
the names --only lists are set (whoever may write under the prefix never
chooses a variable such as MAKEFLAGS or CC); every other key is skipped
unread and said so on stderr, a listed name already set is kept, and a listed
name with no key under the prefix is an error. --prefix without --only stops
with the --only to add. --env NAME=KEY sets any name.
COMMAND does not get VAULT_TOKEN, VAULT_ADDR or VAULT_ORG unless --keep-vault-env.
--env-file FILE: NAME=vault://KEY lines are read like --env NAME=KEY (any name;
--env wins over the file, the file over --prefix); other values pass through.
Masking (--mask; the default for stdout and stderr when not a terminal) turns
every injected secret value, and its base64, URL- and JSON-escaped forms, into
<masked:NAME> in COMMAND's output; values under 4 characters are not masked.

Examples:
  ephemeral-vault run --env DATABASE_URL=prod/db_url -- node server.js
  ephemeral-vault run --prefix prod --only DB_URL,API_KEY -- ./deploy.sh --fast
  ephemeral-vault run --env TOKEN=ci/token --env KEY=ci/key -- sh -c 'make release'
  ephemeral-vault run --env-file .env.vault --mask -- npm test

Exit codes: COMMAND's own (128 + N when it died of signal N); 1 the API refused a check
or a read, or no secret is under PREFIX (or for a name --only lists); 2 usage error
(--prefix without --only, two keys for one name) or vault
not reachable; ${EXIT_CANNOT_START} COMMAND could not be started.`,
    )
    .action(async (command: string[], flags: RunFlags) => {
      const request = injectionRequest(flags);
      const [file, ...args] = command;
      if (file === undefined) throw new ConfigError("run needs a COMMAND after --");
      const resolved = await resolveInjection(flags, exit, request, "run");
      if (resolved === undefined) return;
      const secretValues = new Map<string, string>();
      for (const name of resolved.injection.secrets.keys()) secretValues.set(name, resolved.values.get(name) ?? "");
      const masker = new Masker(secretValues);
      const maskStdout = flags.mask ?? !process.stdout.isTTY;
      const maskStderr = flags.mask ?? !process.stderr.isTTY;
      if ((maskStdout || maskStderr) && masker.unmasked.length > 0) {
        process.stderr.write(`ephemeral-vault run: warning: not masked, shorter than 4 characters: ${masker.unmasked.join(", ")}\n`);
      }
      const env = childEnvironment(process.env, resolved.values, flags.keepVaultEnv === true);
      exit.code = await runInherited(file, args, env, { ...(maskStdout ? { stdout: masker } : {}), ...(maskStderr ? { stderr: masker } : {}) });
    });
}

/** The flags `run` and `export` share. */
export interface InjectionFlags extends ConnectionFlags {
  env: string[];
  envFile: string[];
  prefix?: string;
  only: string[];
  quiet?: boolean;
}

/**
 * What `--env`, `--prefix` (with `--only`) and `--env-file` ask for (parsed, nothing read).
 * @throws ConfigError (exit 2) when none is given, for a bad mapping, file or
 *   `--only` name, or `--only` without `--prefix`.
 */
export function injectionRequest(flags: InjectionFlags): InjectionRequest {
  const mappings = flags.env.map(parseEnvMapping);
  const file = new Map<string, SecretRef | string>();
  for (const path of flags.envFile) for (const [name, source] of readEnvFile(path)) file.set(name, source);
  if (mappings.length === 0 && flags.prefix === undefined && flags.envFile.length === 0) {
    throw new ConfigError("give --env NAME=KEY, --prefix P --only NAMES or --env-file FILE");
  }
  const only = parseNameList(flags.only ?? []);
  if (only !== undefined && flags.prefix === undefined) throw new ConfigError("--only goes with --prefix: it names the variables --prefix may set");
  return { mappings, prefix: flags.prefix, file, only };
}

/**
 * Plans and reads an injection for `run` and `export` (run-core.ts): HEAD
 * every secret, then read each once; `vault://org/ORG_ID/KEY` references go
 * to that org with the same address and token. Once all is read, reports
 * the names `--prefix` set and skipped on stderr (never values) unless `--quiet`. An API refusal
 * or an unreachable vault is printed and left in `exit` (callVault).
 * @returns the plan and name -> value (secrets and plain file values), or undefined after a failure.
 */
export async function resolveInjection(
  flags: InjectionFlags,
  exit: ExitCode,
  request: InjectionRequest,
  command: string,
): Promise<{ injection: Injection; values: Map<string, string> } | undefined> {
  let resolved: { injection: Injection; values: Map<string, string> } | undefined;
  await callVault(flags, exit, async (client, connection: Connection) => {
    const injection = await planInjection(client, request, process.env, (path) => process.stderr.write(`ephemeral-vault ${command}: no secret under ${path}\n`));
    const clientOf = scopedClients(client, (org) => new VaultClient({ fetch: cliFetch(), addr: connection.addr, token: connection.token, org }));
    const values = await readSecrets(clientOf, injection.secrets);
    if (request.prefix !== undefined && !flags.quiet) report(injection.plan, command);
    for (const [name, value] of injection.plain) values.set(name, value);
    resolved = { injection, values };
  });
  return resolved;
}

/** One stderr line for the names set and one per key skipped: names and keys, never values. */
function report(plan: RunPlan, command: string): void {
  for (const { key, reason } of plan.skipped) {
    process.stderr.write(`ephemeral-vault ${command}: skipped ${key}: ${reason} (not read)\n`);
  }
  if (plan.names.size > 0) process.stderr.write(`ephemeral-vault ${command}: set ${[...plan.names.keys()].join(", ")}\n`);
}
