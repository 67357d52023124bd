import type { Command } from "commander";
import { clientFor } from "./client-call.js";
import { argvWarning, resolveConnection } from "./connection.js";
import type { ConnectionFlags } from "./connection.js";
import { withConnectionOptions } from "./connection.js";
import type { ExitCode } from "./registry.js";

/**
 * `mcp [--org ORG_ID]`: an MCP server over stdio with the tools get_secret,
 * put_secret, share_secret, list_secrets, delete_secret, patch_secret. The SDK
 * is imported only here. Runs until stdin closes.
 * @throws ConfigError (exit 2) without a token or with a bad address.
 */
export function registerMcp(program: Command, exit: ExitCode): void {
  withConnectionOptions(program.command("mcp").description("serve the Model Context Protocol over stdio, for AI agents"))
    .addHelpText(
      "after",
      `
Tools: get_secret {key}, put_secret {key, value, ttl_seconds?, max_reads?},
share_secret {value, ttl_seconds?, max_reads?}, list_secrets {prefix?},
delete_secret {key}, patch_secret {key, ttl_seconds?, max_reads?}.
With --org they act on that organization's secrets. Give the agent a
prefix-scoped key: it can do only what its token allows.

Example MCP client configuration:
  {"mcpServers": {"vault": {"command": "npx", "args": ["ephemeral-vault", "mcp"],
    "env": {"VAULT_ADDR": "http://127.0.0.1:8484", "VAULT_TOKEN": "<a scoped key>"}}}}`,
    )
    .action(async (flags: ConnectionFlags) => {
      const connection = resolveConnection(flags);
      if (flags.token !== undefined) process.stderr.write(argvWarning("--token"));
      const { serveMcpStdio } = await import("../mcp/server.js");
      await serveMcpStdio(clientFor(connection));
      exit.code = 0;
    });
}
