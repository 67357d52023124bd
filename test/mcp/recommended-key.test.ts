import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, describe, expect, it } from "vitest";
import { BIN, childEnv, cleanupTemp, E2E_MASTER_KEY, killChildren, ROOT, startVault, tempDir } from "../support/e2e-helpers.js";

/** The `ephemeral-vault keys create ...` line docs/mcp.md recommends (the block after `<!-- test: mcp-key -->`). */
function recommendedKeyCommand(): string[] {
  const text = readFileSync(join(ROOT, "docs", "mcp.md"), "utf8");
  const block = /<!-- test: mcp-key -->\s*\n```sh\n([\s\S]*?)\n```/.exec(text)?.[1];
  const line = block?.split("\n").find((l) => l.startsWith("ephemeral-vault keys create "));
  if (line === undefined) throw new Error("docs/mcp.md has no recommended `keys create` line");
  return line.replace(/^ephemeral-vault /, "").split(/\s+/);
}

function textOf(result: Awaited<ReturnType<Client["callTool"]>>): string {
  const first = (result as CallToolResult).content[0];
  return first !== undefined && first.type === "text" ? first.text : "";
}

describe("the agent key docs/mcp.md recommends", () => {
  afterAll(async () => {
    await killChildren();
    cleanupTemp();
  });

  it("works with every tool the docs say it works with, under its prefix", async () => {
    const vault = await startVault(tempDir());
    const made = spawnSync(process.execPath, [BIN, ...recommendedKeyCommand(), "-q"], {
      cwd: ROOT,
      env: childEnv({ VAULT_ADDR: vault.url, VAULT_TOKEN: E2E_MASTER_KEY }),
      encoding: "utf8",
      timeout: 15_000,
    });
    expect(made.status, made.stderr).toBe(0);
    const token = made.stdout.trim();
    expect(token).toMatch(/^vsk_/);

    const env = childEnv({ VAULT_ADDR: vault.url, VAULT_TOKEN: token });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, "mcp"],
      cwd: ROOT,
      env: Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined)),
      stderr: "pipe",
    });
    const client = new Client({ name: "ephemeral-vault-docs-test", version: "0.0.0" });
    await client.connect(transport);
    try {
      const calls: Array<[string, Record<string, unknown>]> = [
        ["put_secret", { key: "agent/db", value: "v1", ttl_seconds: 3600 }],
        ["secret_info", { key: "agent/db" }],
        ["patch_secret", { key: "agent/db", max_reads: 3 }],
        ["list_secrets", { prefix: "agent/" }],
        ["request_secret", { description: "a value for the agent" }],
        ["delete_secret", { key: "agent/db" }],
      ];
      for (const [name, args] of calls) {
        const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
        expect(result.isError ?? false, `${name}: ${textOf(result)}`).toBe(false);
      }
      // What the docs say is offered, and no more: share_secret needs a key without a prefix, get_secret --allow-reveal.
      const offered = (await client.listTools()).tools.map((t) => t.name).sort();
      expect(offered).toEqual(["delete_secret", "list_secrets", "patch_secret", "put_secret", "request_secret", "secret_info"]);
      // Outside the prefix: refused.
      const outside = (await client.callTool({ name: "secret_info", arguments: { key: "prod/db" } })) as CallToolResult;
      expect(outside.isError).toBe(true);
      expect(textOf(outside)).toContain("(403)");
    } finally {
      await client.close();
    }
  });
});
