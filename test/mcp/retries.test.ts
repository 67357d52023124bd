import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { VaultClient } from "@ephemeral-vault/client";
import { closeMcpClients, connectMcp } from "../support/mcp-client.js";
import { cleanupTemp, E2E_MASTER_KEY, killChildren, startVault, tempDir } from "../support/e2e-helpers.js";
import type { VaultProcess } from "../support/e2e-helpers.js";
import { startFaultProxy } from "../support/fault-proxy.js";
import type { FaultProxy } from "../support/fault-proxy.js";

/**
 * The MCP server's tools retry through the client library (docs/mcp.md,
 * docs/client.md "Retries"): behind a proxy that lets the vault act, then
 * loses the answer, a put or a share is made once and answered, a one-read
 * secret's get_secret still returns its value.
 */

let vault: VaultProcess;
let proxy: FaultProxy;
let direct: VaultClient;

beforeAll(async () => {
  vault = await startVault(tempDir());
  proxy = await startFaultProxy(vault.url);
  direct = new VaultClient({ addr: vault.url, token: E2E_MASTER_KEY, org: null, retry: false });
});
afterEach(async () => {
  await closeMcpClients();
});
afterAll(async () => {
  await proxy.close();
  await killChildren();
  cleanupTemp();
});

function structured(result: unknown): Record<string, unknown> {
  return (result as CallToolResult).structuredContent ?? {};
}

async function audited(action: string, key: string): Promise<number> {
  const page = (await direct.audit.list({ action, key, limit: 1000 })) as { entries: unknown[] };
  return page.entries.length;
}

describe("MCP tools across a lost answer", () => {
  it("put_secret whose 201 was lost to a 503 stores the secret once and succeeds (not 409)", async () => {
    const { client } = await connectMcp({ addr: proxy.url });
    proxy.plan({ match: (m, p) => m === "POST" && p === "/secrets", faults: ["503"] });
    const put = await client.callTool({ name: "put_secret", arguments: { key: "mcp/retry", value: "agent value" } });
    expect(put.isError).toBeFalsy();
    expect(structured(put)).toEqual({ key: "mcp/retry", stored: true });
    expect(proxy.forwarded.map((f) => [f.status, f.fault, f.replayed])).toEqual([
      [201, "503", undefined],
      [201, undefined, "true"],
    ]);
    expect(await audited("secret.created", "mcp/retry")).toBe(1);
    expect((await direct.get("mcp/retry")).value).toBe("agent value");
  });

  it("share_secret whose answer was cut makes one dead drop, and its link opens once", async () => {
    const { client } = await connectMcp({ addr: proxy.url });
    proxy.plan({ match: (m, p) => m === "POST" && p === "/secrets", faults: ["reset"] });
    const shared = await client.callTool({ name: "share_secret", arguments: { value: "shared by the agent" } });
    expect(shared.isError).toBeFalsy();
    const { url, id } = structured(shared) as { url: string; id: string };
    expect(proxy.forwarded).toHaveLength(2);
    expect(proxy.forwarded[1]?.replayed).toBe("true");
    expect(proxy.forwarded[0]?.idempotencyKey).toBe(proxy.forwarded[1]?.idempotencyKey);
    expect(await audited("secret.created", id)).toBe(1);
    expect(await direct.open(url.replace(/^https?:\/\/[^/]+/, vault.url))).toBe("shared by the agent");
  });

  it("get_secret of a one-read secret whose answer was lost returns the value; burned once", async () => {
    await direct.put("mcp/once", "read by the agent", { maxReads: 1 });
    const { client } = await connectMcp({ addr: proxy.url, args: ["--allow-reveal"] });
    proxy.plan({ match: (m, p) => m === "GET" && p === "/secrets/mcp/once", faults: ["503"] });
    const got = await client.callTool({ name: "get_secret", arguments: { key: "mcp/once" } });
    expect(got.isError).toBeFalsy();
    expect(structured(got)).toEqual({ key: "mcp/once", value: "read by the agent" });
    expect(proxy.forwarded).toHaveLength(2);
    expect(await direct.exists("mcp/once")).toBe(false);
    expect(await audited("secret.read", "mcp/once")).toBe(1);
  });
});
