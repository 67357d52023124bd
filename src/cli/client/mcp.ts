import type { Command } from "commander";
import { VaultClient } from "@ephemeral-vault/client";
import { ConfigError } from "../../config.js";
import { parseNameList } from "../../inject/env-names.js";
import { clientFor } from "./call.js";
import { EXIT_OK } from "../exit-codes.js";
import { argvWarning, resolveConnection } from "./connection.js";
import type { ConnectionFlags } from "./connection.js";
import { withConnectionOptions } from "./connection.js";
import type { ExitCode } from "../exit-codes.js";
import type { HttpToolOptions } from "../../mcp/http-allow.js";
import { cliFetch } from "./ca-fetch.js";

interface McpFlags extends ConnectionFlags {
  allowCommand: string[];
  allowEnv: string[];
  allowReveal?: string | boolean;
  commandTimeout: string;
  outputLimit: string;
  allowHost: string[];
  allowHttp: string[];
  requestTimeout: string;
}

/**
 * `mcp [--org ORG_ID] [--allow-command PATTERN ...] [--allow-env NAMES ...] [--allow-reveal [PREFIX]]
 * [--command-timeout SECONDS] [--output-limit BYTES] [--allow-host PATTERN[=PREFIX] ...]
 * [--allow-http HOST ...] [--request-timeout SECONDS]`: an MCP server over
 * stdio (docs/mcp.md). By default no tool returns a secret value:
 * list_secrets, secret_info, put_secret, share_secret, request_secret, patch_secret,
 * delete_secret, and run_command when `--allow-command` names what it may
 * run (setting only the variables `--allow-env` names); http_request when
 * `--allow-host` names the URLs it may call (and which keys each may
 * receive); get_secret only with `--allow-reveal`. Tools the token cannot use are
 * not offered. The SDK is imported only here. Runs until stdin closes.
 * @throws ConfigError (exit 2) without a token, with a bad address, a bad
 *   pattern or host, or a timeout or limit that is not a positive integer.
 */
export function registerMcp(program: Command, exit: ExitCode): void {
  withConnectionOptions(program.command("mcp").description("serve the Model Context Protocol over stdio, for AI agents"))
    .option(
      "--allow-command <pattern>",
      'a command run_command may run (repeatable): argv words, * within a word, a final ** for any further arguments, e.g. "npm test" or "node scripts/*.js **"',
      (value: string, previous: string[]) => [...previous, value],
      [],
    )
    .option(
      "--allow-env <names>",
      "the variables run_command may set from secrets (comma-separated, repeatable), e.g. DATABASE_URL,API_KEY; no others",
      (value: string, previous: string[]) => [...previous, value],
      [],
    )
    .option("--allow-reveal [prefix]", "offer get_secret, which puts a secret's value into the model's context (only keys under PREFIX/ when given)")
    .option("--command-timeout <seconds>", "run_command kills the command after this many seconds", "60")
    .option("--output-limit <bytes>", "run_command keeps this many bytes of each of stdout and stderr; http_request of the answer's body", "65536")
    .option(
      "--allow-host <pattern>",
      'a URL http_request may call (repeatable): a host or *.domain, optional :PORT and /path/ prefix, and =PREFIX to allow only keys starting with PREFIX there, e.g. "api.example.com=prod/example/"',
      (value: string, previous: string[]) => [...previous, value],
      [],
    )
    .option("--allow-http <host>", "let http_request use plain http for HOST (or HOST:PORT), still only within --allow-host (repeatable)", (value: string, previous: string[]) => [...previous, value], [])
    .option("--request-timeout <seconds>", "http_request gives up after this many seconds (redirects included)", "30")
    .addHelpText(
      "after",
      `
Tools (only those the token may use are offered; none returns a secret value):
  list_secrets {prefix?}, secret_info {key}, put_secret {key, value, ttl_seconds?, max_reads?},
  share_secret {value, ttl_seconds?, max_reads?} (its {receipt} tells whether the link was opened),
  patch_secret {key, ttl_seconds?, max_reads?},
  delete_secret {key}; request_secret {description, ttl_seconds?} asks a person for a
  secret (the link to send; {request_id} tells whether it was answered);
  run_command {command: [argv], env?: {NAME: KEY or "request:<id>"}, prefix?} with
  --allow-command: it sets only the variables --allow-env names, and its output comes
  back with every injected value masked.
  http_request {method, url, headers?, query?, body?} with --allow-host: {{vault:KEY}} in a
  header, query value or body string is replaced by the secret; the answer comes back masked.
  get_secret {key} only with --allow-reveal: the value then enters the model's context.
With --org they act on that organization's secrets. Give the agent a
prefix-scoped key: it can do only what its token allows (docs/mcp.md).

Example MCP client configuration:
  {"mcpServers": {"vault": {"command": "npx",
    "args": ["ephemeral-vault", "mcp", "--allow-command", "npm test", "--allow-env", "DATABASE_URL"],
    "env": {"VAULT_ADDR": "http://127.0.0.1:8484", "VAULT_TOKEN": "<a scoped key>"}}}}`,
    )
    .action(async (flags: McpFlags) => {
      const connection = resolveConnection(flags);
      if (flags.token !== undefined) process.stderr.write(argvWarning("--token"));
      const { parseCommandPattern } = await import("../../mcp/command-allow.js");
      const commands = flags.allowCommand.map(parseCommandPattern);
      const allowEnv = parseNameList(flags.allowEnv, "--allow-env") ?? new Set<string>();
      const timeoutSeconds = positiveInt(flags.commandTimeout, "--command-timeout");
      const maxOutputBytes = positiveInt(flags.outputLimit, "--output-limit");
      const http = await httpOptions(flags);
      const reveal = flags.allowReveal === undefined ? undefined : { prefix: typeof flags.allowReveal === "string" ? flags.allowReveal : undefined };
      const { serveMcpStdio } = await import("../../mcp/server.js");
      await serveMcpStdio({
        client: clientFor(connection),
        globalClient: new VaultClient({ fetch: cliFetch(), addr: connection.addr, token: connection.token, org: null }),
        reveal,
        commands,
        allowEnv,
        timeoutMs: timeoutSeconds * 1000,
        maxOutputBytes,
        http,
      });
      exit.code = EXIT_OK;
    });
}

/** The http_request options of `--allow-host`, `--allow-http` and `--request-timeout`, or undefined without `--allow-host`. */
async function httpOptions(flags: McpFlags): Promise<HttpToolOptions | undefined> {
  const timeoutSeconds = positiveInt(flags.requestTimeout, "--request-timeout");
  if (flags.allowHttp.length > 0 && flags.allowHost.length === 0) throw new ConfigError("--allow-http needs --allow-host: it only lifts https for hosts the list allows");
  if (flags.allowHost.length === 0) return undefined;
  const { parseHostRule } = await import("../../mcp/http-allow.js");
  const hosts = flags.allowHost.map(parseHostRule);
  const allowHttp = new Set<string>();
  for (const text of flags.allowHttp) {
    let url: URL;
    try {
      url = new URL(`http://${text}`);
    } catch {
      throw new ConfigError(`bad --allow-http "${text}": a host or host:port, e.g. 127.0.0.1:8080`);
    }
    if (url.pathname !== "/" || url.username !== "" || url.search !== "" || text.includes("*")) throw new ConfigError(`bad --allow-http "${text}": a host or host:port only`);
    const port = url.port !== "" ? url.port : /:80$/.test(text) ? "80" : "";
    allowHttp.add(port === "" ? url.hostname : `${url.hostname}:${port}`);
  }
  return { hosts, allowHttp, timeoutMs: timeoutSeconds * 1000 };
}

function positiveInt(text: string, flag: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n < 1) throw new ConfigError(`bad ${flag} "${text}": a whole number above 0`);
  return n;
}
