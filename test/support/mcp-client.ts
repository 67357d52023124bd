import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { BIN, childEnv, E2E_MASTER_KEY, ROOT } from "./e2e-helpers.js";

/** The clients connectMcp() opened and closeMcpClients() has not closed yet. */
const open: Client[] = [];

/** What connectMcp() starts the server with; every field has a default. */
export interface McpStart {
  /** VAULT_ADDR of the server. */
  addr: string;
  /** `ephemeral-vault mcp` flags. */
  args?: string[];
  /** VAULT_TOKEN; default the e2e master key. */
  token?: string;
  /** More environment for the server (NODE_EXTRA_CA_CERTS, ...). */
  env?: Record<string, string | undefined>;
}

/**
 * The MCP server as an agent starts it: the built `ephemeral-vault mcp` over
 * stdio, driven by the SDK's own client (docs/mcp.md). Close them all with
 * closeMcpClients() after each test.
 * @returns the connected client and what the server wrote on stderr so far.
 */
export async function connectMcp(start: McpStart): Promise<{ client: Client; stderr: () => string }> {
  const env = childEnv({ VAULT_ADDR: start.addr, VAULT_TOKEN: start.token ?? E2E_MASTER_KEY, ...start.env });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, "mcp", ...(start.args ?? [])],
    cwd: ROOT,
    env: Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined)),
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: "ephemeral-vault-test", version: "0.0.0" });
  await client.connect(transport);
  open.push(client);
  return { client, stderr: () => stderr };
}

/** Remembers a client connected another way (in memory), for closeMcpClients(). */
export function trackMcpClient(client: Client): void {
  open.push(client);
}

/** Closes every client connectMcp() opened (the servers exit with their stdin). */
export async function closeMcpClients(): Promise<void> {
  await Promise.all(open.splice(0).map((c) => c.close()));
}
