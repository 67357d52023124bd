import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { version } from "../version.js";
import { probeCapabilities } from "./capabilities.js";
import { registerVaultTools } from "./tools.js";
import type { McpOptions } from "./tools.js";

/**
 * An MCP server (Model Context Protocol, official SDK) exposing the vault's
 * tools (tools.ts), not yet connected. It first probes what the token may
 * do (capabilities.ts) and offers only the tools it can use.
 * @returns the server, the tools offered, the probes' refusals and why they
 *   could not tell (a refused token, an unreachable vault), for stderr.
 */
export async function createVaultMcpServer(options: McpOptions): Promise<{ server: McpServer; tools: string[]; refusals: string[]; problem: string | undefined }> {
  const server = new McpServer({ name: "ephemeral-vault", version });
  const caps = await probeCapabilities(options.client, options.globalClient);
  const tools = registerVaultTools(server, options, caps);
  return { server, tools, refusals: caps.refusals, problem: caps.problem };
}

/**
 * Serves MCP over stdio: stdout carries only protocol messages; notices go to
 * stderr (the tools offered, what the token may not do, and a warning when
 * the token is refused or the vault cannot be reached: never a token or a value). Resolves once connected; the process then runs until stdin closes.
 */
export async function serveMcpStdio(options: McpOptions): Promise<void> {
  const { server, tools, refusals, problem } = await createVaultMcpServer(options);
  if (problem !== undefined) process.stderr.write(`ephemeral-vault mcp: warning: ${problem}; every tool call will fail until it is fixed\n`);
  const transport = new StdioServerTransport();
  transport.onclose = () => process.exit(0);
  await server.connect(transport);
  const where = options.client.org === undefined ? "" : `, org ${options.client.org}`;
  process.stderr.write(`ephemeral-vault ${version} MCP server on stdio, vault ${options.client.addr}${where}; tools: ${tools.join(", ") || "none"}\n`);
  for (const refusal of refusals) process.stderr.write(`ephemeral-vault mcp: the token may not ${refusal}; its tools are not offered\n`);
}
