import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { VaultClient } from "../client/index.js";
import { version } from "../version.js";
import { registerVaultTools } from "./tools.js";

/**
 * An MCP server (Model Context Protocol, official SDK) exposing the vault's
 * secret tools through `client`; not yet connected.
 */
export function createVaultMcpServer(client: VaultClient): McpServer {
  const server = new McpServer({ name: "ephemeral-vault", version });
  registerVaultTools(server, client);
  return server;
}

/**
 * Serves MCP over stdio: stdout carries only protocol messages, notices go to
 * stderr. Resolves once connected; the process then runs until stdin closes.
 */
export async function serveMcpStdio(client: VaultClient): Promise<void> {
  const server = createVaultMcpServer(client);
  const transport = new StdioServerTransport();
  transport.onclose = () => process.exit(0);
  await server.connect(transport);
  process.stderr.write(`ephemeral-vault ${version} MCP server on stdio, vault ${client.addr}\n`);
}
