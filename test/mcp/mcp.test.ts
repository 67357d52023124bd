import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { closeMcpClients, connectMcp } from "../support/mcp-client.js";
import { cleanupTemp, E2E_MASTER_KEY, killChildren, startVault, tempDir } from "../support/e2e-helpers.js";
import type { VaultProcess } from "../support/e2e-helpers.js";
import { openEnvelope, parseEnvelope } from "@ephemeral-vault/client";
import type { EnvelopeV1 } from "@ephemeral-vault/client";

/** The MCP server as an agent starts it (test/support/mcp-client.ts). */
function connect(vault: VaultProcess, args: string[] = [], token = E2E_MASTER_KEY) {
  return connectMcp({ addr: vault.url, args, token });
}

function textOf(result: Awaited<ReturnType<Client["callTool"]>>): string {
  const content = (result as CallToolResult).content;
  const first = content[0];
  return first !== undefined && first.type === "text" ? first.text : "";
}

describe("ephemeral-vault mcp", () => {
  let vault: VaultProcess;
  beforeAll(async () => {
    vault = await startVault(tempDir());
  });
  afterEach(async () => {
    await closeMcpClients();
  });
  afterAll(async () => {
    await killChildren();
    cleanupTemp();
  });

  it("lists the tools, each with a description and an input schema (get_secret with --allow-reveal)", async () => {
    const { client } = await connect(vault, ["--allow-reveal"]);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["delete_secret", "get_secret", "list_secrets", "patch_secret", "put_secret", "request_secret", "secret_info", "share_secret"]);
    for (const tool of tools) {
      expect(tool.description?.length ?? 0, tool.name).toBeGreaterThan(40);
      expect(tool.inputSchema.type).toBe("object");
    }
    const put = tools.find((t) => t.name === "put_secret");
    expect(Object.keys(put?.inputSchema.properties ?? {}).sort()).toEqual(["key", "max_reads", "ttl_seconds", "value"]);
    expect(put?.inputSchema.required?.slice().sort()).toEqual(["key", "value"]);
  });

  it("calls each tool against the real vault", async () => {
    const { client, stderr } = await connect(vault, ["--allow-reveal"]);
    const value = "agent value\nwith ünïcode 🔐";
    const put = await client.callTool({ name: "put_secret", arguments: { key: "agent/db", value, ttl_seconds: 3600, max_reads: 5 } });
    expect(put.isError).toBeFalsy();
    expect(textOf(put)).not.toContain(value);

    const got = await client.callTool({ name: "get_secret", arguments: { key: "agent/db" } });
    expect(got.isError).toBeFalsy();
    expect(JSON.parse(textOf(got))).toEqual({ key: "agent/db", value });
    expect(got.structuredContent).toEqual({ key: "agent/db", value });

    const listed = await client.callTool({ name: "list_secrets", arguments: { prefix: "agent/" } });
    expect(listed.isError).toBeFalsy();
    expect(textOf(listed)).not.toContain("agent value");
    const { secrets } = JSON.parse(textOf(listed)) as { secrets: Array<Record<string, unknown>> };
    expect(secrets).toEqual([expect.objectContaining({ key: "agent/db", read_count: 1, max_reads: 5 })]);

    const patched = await client.callTool({ name: "patch_secret", arguments: { key: "agent/db", max_reads: 1 } });
    expect(patched.isError).toBeFalsy();
    const meta = (await (await vault.request("GET", "/secrets")).json()) as { secrets: Array<Record<string, unknown>> };
    expect(meta.secrets.find((s) => s.key === "agent/db")).toMatchObject({ max_reads: 1, read_count: 0 });

    const shared = await client.callTool({ name: "share_secret", arguments: { value: "one-time" } });
    expect(shared.isError).toBeFalsy();
    const link = JSON.parse(textOf(shared)) as { url: string; id: string };
    expect(link.id).toMatch(/^[0-9a-f]{64}$/);
    expect(link.url).toMatch(new RegExp(`/s/${link.id}#[A-Za-z0-9_-]{43}$`));
    // Shared end to end: the vault holds only the envelope; the link's key opens it.
    const drop = (await (await vault.request("GET", `/secrets/${link.id}`)).json()) as { value: string };
    expect(drop.value).not.toContain("one-time");
    const stored = parseEnvelope(drop.value);
    expect(stored).toBeDefined();
    expect(await openEnvelope(stored as EnvelopeV1, link.url.split("#")[1] ?? "")).toBe("one-time");
    expect((await vault.request("GET", `/secrets/${link.id}`)).status).toBe(404);

    const deleted = await client.callTool({ name: "delete_secret", arguments: { key: "agent/db" } });
    expect(deleted.isError).toBeFalsy();
    expect((await vault.request("GET", "/secrets/agent/db")).status).toBe(404);
    expect(stderr()).not.toContain(value);
  });

  it("share_secret answers the receipt; called again with it, whether the link was opened (never the value)", async () => {
    const { client } = await connect(vault);
    const shared = await client.callTool({ name: "share_secret", arguments: { value: "receipt value", max_reads: 2 } });
    expect(shared.isError).toBeFalsy();
    const made = shared.structuredContent as { url: string; id: string; receipt: string };
    expect(made.receipt).toMatch(/^vrc_[A-Za-z0-9_-]{54}$/);
    const status = async () => {
      const r = await client.callTool({ name: "share_secret", arguments: { receipt: made.receipt } });
      expect(r.isError, textOf(r)).toBeFalsy();
      expect(textOf(r)).not.toContain("receipt value");
      return r.structuredContent as Record<string, unknown>;
    };
    expect(await status()).toEqual({ receipt: made.receipt, state: "waiting", read_count: 0, max_reads: 2, last_read_at: null, expires_at: null });
    const read = await fetch(`${vault.url}/s/${made.id}/reveal`, { method: "POST" });
    // An end-to-end link needs its proof: the reveal is refused and nothing is read.
    expect(read.status).toBe(403);
    expect((await status()).state).toBe("waiting");
    expect((await vault.request("POST", `/receipts/${made.receipt}/destroy`, undefined, null)).status).toBe(200);
    expect(await status()).toMatchObject({ state: "deleted", read_count: 0 });

    const neither = await client.callTool({ name: "share_secret", arguments: {} });
    expect(neither.isError).toBe(true);
    const both = await client.callTool({ name: "share_secret", arguments: { value: "x", receipt: made.receipt } });
    expect(both.isError).toBe(true);
    const unknown = await client.callTool({ name: "share_secret", arguments: { receipt: `vrc_${"Z".repeat(54)}` } });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toMatch(/404/);
  });

  it("returns API refusals as tool errors with the API's message, and keeps serving", async () => {
    const { client } = await connect(vault, ["--allow-reveal"]);
    const missing = await client.callTool({ name: "get_secret", arguments: { key: "agent/none" } });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toMatch(/\(404\)$/);
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(8);

    const { client: denied } = await connect(vault, [], "not-a-valid-token-123456");
    const refused = await denied.callTool({ name: "list_secrets", arguments: {} });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/\(401\)$/);
  });

  it("with --org acts on that organization's secrets", async () => {
    const org = (await (await vault.request("POST", "/orgs", { name: "agents" })).json()) as { id: string };
    const { client } = await connect(vault, ["--org", org.id]);
    const put = await client.callTool({ name: "put_secret", arguments: { key: "org/thing", value: "org value" } });
    expect(put.isError).toBeFalsy();
    const inOrg = await vault.request("GET", `/orgs/${org.id}/secrets/org/thing`);
    expect(((await inOrg.json()) as { value: string }).value).toBe("org value");
    expect((await vault.request("GET", "/secrets/org/thing")).status).toBe(404);
    const listed = await client.callTool({ name: "list_secrets", arguments: {} });
    expect(JSON.parse(textOf(listed))).toEqual({ secrets: [expect.objectContaining({ key: "org/thing", read_count: 1 })] });
  });
});
