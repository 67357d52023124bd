import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import * as z from "zod";
import { parseEnvMapping } from "../inject/env-names.js";
import { Masker, MIN_MASKED_LENGTH } from "../inject/mask.js";
import { runCaptured } from "../inject/run-child.js";
import { planInjection, readSecrets } from "../inject/run-core.js";
import { childEnvironment } from "../inject/run-plan.js";
import { commandAllowed } from "./command-allow.js";
import type { McpOptions } from "./options.js";
import { checkAnswers, readAnswers, requestRef } from "./request-tool.js";
import type { RequestKeyring } from "./request-tool.js";
import { failure, guarded, result } from "./tool-kit.js";

/**
 * run_command (docs/mcp.md): runs a command allowed by `--allow-command`
 * with named secrets in its environment, exactly as the CLI's `run` plans
 * and reads them (run-core.ts: HEAD before each read, the server's
 * VAULT_TOKEN, VAULT_ADDR and VAULT_ORG not passed on), setting only the
 * variables the operator named with `--allow-env` (docs/mcp.md,
 * "run_command"): the agent chooses `env` and `prefix` and may have written
 * the values, so neither chooses a variable; a name outside the list, or one
 * already set in the server's environment, is refused before anything is
 * read. Without a shell, stdin closed, within the
 * timeout; returns its exit code and its output with every injected value
 * and its encodings masked (mask.ts), each stream capped. A command that
 * no pattern allows is refused before anything is read; a value shorter
 * than MIN_MASKED_LENGTH characters cannot be masked, so the command is
 * then not started (its read has counted). An `env` value `request:<id>`
 * is the answer of a request request_secret made (request-tool.ts): every
 * such request is checked answered before anything is read, then its answer
 * is read once and masked like a secret (docs/mcp.md, "request_secret").
 * @param canList whether the token may list: the `prefix` input is offered only then.
 * @param keyring the private keys of the requests this server made.
 */
export function registerRunCommand(server: McpServer, options: McpOptions, canList: boolean, keyring: RequestKeyring): void {
  const { client } = options;
  const allowed = options.commands.map((p) => `"${p.text}"`).join(", ");
  const allowedNames = options.allowEnv.size === 0 ? "none (the server was started without --allow-env)" : [...options.allowEnv].join(", ");
  const env = z
    .record(z.string(), z.string())
    .optional()
    .describe(
      `Variables to set from secrets: {"NAME": "secret/key"}, e.g. {"DATABASE_URL": "prod/db_url"}; {"NAME": "request:<request_id>"} sets the answer of a request made with request_secret. NAME must be one the operator allowed: ${allowedNames}.`,
    );
  const prefix = z
    .string()
    .optional()
    .describe(`The secrets under this path, named after the rest of the key ("prod" takes prod/db_url as DB_URL), as the CLI's run --prefix --only: only the names the operator allowed are set (${allowedNames}); other keys are skipped and not read.`);
  server.registerTool(
    "run_command",
    {
      title: "Run a command with secrets in its environment",
      description: `Run a command with secrets in its environment without seeing them: the secrets are read (each read counts) and given to the command as environment variables; its exit code and output come back with every secret value (and its base64, URL- and JSON-escaped forms) replaced by <masked:NAME>. Only these commands may run (argv words; * matches within one word, a final ** any further arguments): ${allowed}. No shell: pass the command as an argv array, e.g. ["npm", "test"]. Stdin is closed; it is killed after ${Math.round(options.timeoutMs / 1000)} s; each of stdout and stderr is cut after ${options.maxOutputBytes} bytes.`,
      inputSchema: {
        command: z.array(z.string()).min(1).describe('The command and its arguments, e.g. ["npm", "run", "migrate"].'),
        env,
        ...(canList ? { prefix } : {}),
      },
      outputSchema: {
        exit_code: z.number().nullable().describe("The exit code; 128 + N when killed by signal N; null when it could not start."),
        timed_out: z.boolean(),
        stdout: z.string(),
        stderr: z.string(),
        stdout_truncated_bytes: z.number(),
        stderr_truncated_bytes: z.number(),
        injected: z.array(z.string()).describe("The variable names set from secrets (their values are masked)."),
      },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    },
    async (input) =>
      guarded(async () => {
        const argv = input.command;
        if (!options.commands.some((p) => commandAllowed(p, argv))) {
          return failure(`command not allowed: ${JSON.stringify(argv)}; allowed (--allow-command): ${allowed}`);
        }
        const wantedPrefix = "prefix" in input && typeof input.prefix === "string" ? input.prefix : undefined;
        const entries = Object.entries(input.env ?? {});
        // `request:<id>`: a request's answer (request-tool.ts), not a secret key.
        const answerNames = new Map<string, string>();
        for (const [name, key] of entries) {
          const id = requestRef(key);
          if (id !== undefined) answerNames.set(name, id);
        }
        const allMappings = entries.map(([name, key]) => parseEnvMapping(`${name}=${key}`));
        const mappings = allMappings.filter(({ name }) => !answerNames.has(name));
        // The agent chooses these names and may have written the values: only the operator's --allow-env names.
        const refusedName = allMappings.find(({ name }) => !options.allowEnv.has(name) || process.env[name] !== undefined);
        if (refusedName !== undefined) {
          return failure(
            options.allowEnv.has(refusedName.name)
              ? `not run: ${refusedName.name} is already set in the server's environment`
              : `not run: ${refusedName.name} is not among the variables the operator allowed (--allow-env): ${allowedNames}`,
          );
        }
        if (allMappings.length === 0 && wantedPrefix === undefined) return failure("give env {NAME: KEY}" + (canList ? " or prefix" : ""));
        const only = wantedPrefix === undefined ? undefined : new Set([...options.allowEnv].filter((name) => !allMappings.some((m) => m.name === name)));
        const planned = mappings.length > 0 || wantedPrefix !== undefined;
        const injection = planned ? await planInjection(client, { mappings, prefix: wantedPrefix, only, missingOnlyIsFine: true }, process.env) : undefined;
        if (injection !== undefined && injection.secrets.size === 0 && answerNames.size === 0) {
          return failure(`not run: nothing to set: no key under the prefix maps to an allowed variable (${allowedNames})`);
        }
        const requestIds = new Set(answerNames.values());
        const notReady = await checkAnswers(client, keyring, requestIds);
        if (notReady !== undefined) return notReady;
        const values = injection === undefined || injection.secrets.size === 0 ? new Map<string, string>() : await readSecrets(() => client, injection.secrets);
        const answers = await readAnswers(client, keyring, requestIds);
        if (!(answers instanceof Map)) return answers;
        for (const [name, id] of answerNames) values.set(name, answers.get(id) ?? "");
        const masker = new Masker(values);
        if (masker.unmasked.length > 0) {
          return failure(`not run: the values of ${masker.unmasked.join(", ")} are shorter than ${MIN_MASKED_LENGTH} characters and cannot be masked`);
        }
        const [file, ...args] = argv as [string, ...string[]];
        const ran = await runCaptured(file, args, childEnvironment(process.env, values, false), masker, {
          timeoutMs: options.timeoutMs,
          maxBytes: options.maxOutputBytes,
        });
        if (ran.startError !== undefined) return failure(`cannot start ${file}: ${ran.startError}`);
        return result({
          exit_code: ran.exitCode,
          timed_out: ran.timedOut,
          stdout: ran.stdout,
          stderr: ran.stderr,
          stdout_truncated_bytes: ran.stdoutDropped,
          stderr_truncated_bytes: ran.stderrDropped,
          injected: [...values.keys()],
        });
      }),
  );
}
