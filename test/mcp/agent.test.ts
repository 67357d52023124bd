import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { closeMcpClients, connectMcp } from "../support/mcp-client.js";
import { cleanupTemp, E2E_MASTER_KEY, killChildren, startVault, tempDir } from "../support/e2e-helpers.js";
import type { VaultProcess } from "../support/e2e-helpers.js";

// The MCP server keeps secret values away from the model (docs/mcp.md): driven by the SDK's own client.

/** The MCP server as an agent starts it (test/support/mcp-client.ts). */
function connect(vault: VaultProcess, args: string[] = [], token = E2E_MASTER_KEY, addr = vault.url) {
  return connectMcp({ addr, args, token });
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

function textOf(result: CallToolResult): string {
  const first = result.content[0];
  return first !== undefined && first.type === "text" ? first.text : "";
}

async function toolNames(client: Client): Promise<string[]> {
  return (await client.listTools()).tools.map((t) => t.name).sort();
}

async function readCount(vault: VaultProcess, key: string): Promise<number | undefined> {
  const body = (await (await vault.request("GET", "/secrets")).json()) as { secrets: Array<{ key?: string; read_count: number }> };
  return body.secrets.find((s) => s.key === key)?.read_count;
}

async function scopedKey(vault: VaultProcess, permissions: string[], prefix?: string): Promise<string> {
  const res = await vault.request("POST", "/keys", { name: `agent ${permissions.join("+")}`, permissions, ...(prefix === undefined ? {} : { prefix }) });
  expect(res.status).toBe(201);
  return ((await res.json()) as { token: string }).token;
}

const SECRET = "agent-secret value/+?&\"ü";
/** Prints $S as is, in base64, base64url, URL-encoded and JSON, on stdout and stderr; exits 3. */
const LEAKY = `const s = process.env.S; const t = [s, Buffer.from(s).toString("base64"), Buffer.from(s).toString("base64url"), encodeURIComponent(s), JSON.stringify({s}), "token:" + (process.env.VAULT_TOKEN ?? "none")].join("\\n");
process.stdout.write(t); process.stderr.write(t); process.exit(3);`;

describe("mcp: no tool returns a value by default", () => {
  let vault: VaultProcess;
  beforeAll(async () => {
    vault = await startVault(tempDir());
    for (const key of ["agent/db", "agent/once", "other/x"]) {
      expect((await vault.request("POST", "/secrets", { key, value: SECRET, ...(key === "agent/once" ? { max_reads: 1 } : {}) })).status).toBe(201);
    }
    expect((await vault.request("POST", "/secrets", { key: "agent/short", value: "abc" })).status).toBe(201);
  });
  afterEach(async () => {
    await closeMcpClients();
  });
  afterAll(async () => {
    await killChildren();
    cleanupTemp();
  });

  it("without --allow-reveal there is no get_secret, and no result of any tool holds the value", async () => {
    const { client } = await connect(vault, ["--allow-env", "S", "--allow-command", `${process.execPath} -e **`]);
    const names = await toolNames(client);
    expect(names).toEqual(["delete_secret", "list_secrets", "patch_secret", "put_secret", "request_secret", "run_command", "secret_info", "share_secret"]);
    const results = [
      await call(client, "put_secret", { key: "agent/new", value: SECRET }),
      await call(client, "secret_info", { key: "agent/db" }),
      await call(client, "list_secrets", { prefix: "agent/" }),
      await call(client, "patch_secret", { key: "agent/new", ttl_seconds: 600 }),
      await call(client, "share_secret", { value: SECRET }),
      await call(client, "run_command", { command: [process.execPath, "-e", LEAKY], env: { S: "agent/db" } }),
      await call(client, "delete_secret", { key: "agent/new" }),
    ];
    for (const r of results) {
      expect(r.isError, textOf(r)).toBeFalsy();
      const all = JSON.stringify(r);
      expect(all).not.toContain(SECRET);
      expect(all).not.toContain(JSON.stringify(SECRET).slice(1, -1));
      expect(all).not.toContain(Buffer.from(SECRET).toString("base64").slice(0, 12));
      expect(all).not.toContain(encodeURIComponent(SECRET));
    }
    // secret_info counts no read.
    expect(results[1]?.structuredContent).toMatchObject({ key: "agent/db", exists: true, read_count: 0 });
  });

  it("run_command: a command printing its injected secret comes back masked, with its exit code; no VAULT_TOKEN for it", async () => {
    const { client } = await connect(vault, ["--allow-env", "S", "--allow-command", `${process.execPath} -e **`]);
    const ran = await call(client, "run_command", { command: [process.execPath, "-e", LEAKY], env: { S: "agent/db" } });
    expect(ran.isError, textOf(ran)).toBeFalsy();
    const out = ran.structuredContent as { exit_code: number; stdout: string; stderr: string; injected: string[]; timed_out: boolean };
    expect(out.exit_code).toBe(3);
    expect(out.timed_out).toBe(false);
    expect(out.injected).toEqual(["S"]);
    for (const stream of [out.stdout, out.stderr]) {
      expect(stream.match(/<masked:S>/g)).toHaveLength(5);
      expect(stream).toContain("token:none");
      expect(stream).not.toContain(E2E_MASTER_KEY);
    }
    expect(JSON.parse(textOf(ran))).toEqual(out);
  });

  it("run_command: a command no pattern allows is refused before anything is read", async () => {
    const { client } = await connect(vault, ["--allow-env", "S", "--allow-command", "true", "--allow-command", "node scripts/*.js"]);
    for (const command of [["sh", "-c", "echo $S"], ["node", "scripts/../x.js"], ["node", "scripts/a.js", "extra"], ["true", "x"]]) {
      const refused = await call(client, "run_command", { command, env: { S: "agent/once" } });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toMatch(/command not allowed/);
    }
    expect(await readCount(vault, "agent/once")).toBe(0);
    const ok = await call(client, "run_command", { command: ["true"], env: { S: "agent/db" } });
    expect(ok.structuredContent).toMatchObject({ exit_code: 0 });
  });

  it("run_command sets only the variables the operator named with --allow-env, never one already set", async () => {
    const { client } = await connect(vault, ["--allow-env", "S,HOME", "--allow-command", "true"]);
    for (const name of ["MAKEFLAGS", "CC", "NODE_OPTIONS", "LD_PRELOAD", "BASH_ENV", "PATH", "lower"]) {
      const refused = await call(client, "run_command", { command: ["true"], env: { [name]: "agent/once" } });
      expect(refused.isError, name).toBe(true);
      expect(textOf(refused)).toMatch(new RegExp(`not run: ${name} is not among the variables the operator allowed \\(--allow-env\\): S, HOME`));
    }
    const home = await call(client, "run_command", { command: ["true"], env: { HOME: "agent/once" } });
    expect(textOf(home)).toMatch(/not run: HOME is already set/);
    expect(await readCount(vault, "agent/once")).toBe(0);
    const { client: none } = await connect(vault, ["--allow-command", "true"]);
    const refused = await call(none, "run_command", { command: ["true"], env: { S: "agent/once" } });
    expect(textOf(refused)).toMatch(/not among the variables the operator allowed \(--allow-env\): none/);
    expect(await readCount(vault, "agent/once")).toBe(0);
  });

  it("run_command's prefix sets only allowed names: a planted agent/makeflags is skipped and not read", async () => {
    expect((await vault.request("POST", "/secrets", { key: "agent/makeflags", value: "--eval=$(shell touch /tmp/pwned-by-mcp)" })).status).toBe(201);
    const { client } = await connect(vault, ["--allow-env", "DB", "--allow-command", `${process.execPath} -e *`]);
    const ran = await call(client, "run_command", { command: [process.execPath, "-e", "process.stdout.write(String(process.env.MAKEFLAGS) + ' ' + process.env.DB)"], prefix: "agent" });
    expect(ran.isError, textOf(ran)).toBeFalsy();
    expect(ran.structuredContent).toMatchObject({ stdout: "undefined <masked:DB>", injected: ["DB"] });
    expect(await readCount(vault, "agent/makeflags")).toBe(0);
    expect(await readCount(vault, "agent/once")).toBe(0);
    const { client: none } = await connect(vault, ["--allow-command", "true"]);
    const nothing = await call(none, "run_command", { command: ["true"], prefix: "agent" });
    expect(nothing.isError).toBe(true);
    expect(textOf(nothing)).toMatch(/nothing to set/);
  });

  it("run_command is not offered without --allow-command; it refuses a value too short to mask", async () => {
    const { client: none } = await connect(vault);
    expect(await toolNames(none)).not.toContain("run_command");
    const { client } = await connect(vault, ["--allow-env", "S", "--allow-command", "true"]);
    const refused = await call(client, "run_command", { command: ["true"], env: { S: "agent/short" } });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/shorter than 4 characters/);
  });

  it("run_command: the timeout kills the command, and each stream is capped", async () => {
    const { client } = await connect(vault, ["--allow-env", "S", "--allow-command", `${process.execPath} -e *`, "--command-timeout", "1", "--output-limit", "100"]);
    const slow = await call(client, "run_command", { command: [process.execPath, "-e", "process.stdout.write('started'); setInterval(() => {}, 1000)"], env: { S: "agent/db" } });
    expect(slow.structuredContent).toMatchObject({ timed_out: true, exit_code: 137, stdout: "started" });
    const loud = await call(client, "run_command", { command: [process.execPath, "-e", "process.stdout.write('x'.repeat(1000))"], env: { S: "agent/db" } });
    expect(loud.structuredContent).toMatchObject({ stdout: "x".repeat(100), stdout_truncated_bytes: 900 });
  });

  it("--allow-reveal PREFIX offers get_secret for keys under PREFIX/ only, saying the value enters the context", async () => {
    const { client } = await connect(vault, ["--allow-reveal", "agent"]);
    const tool = (await client.listTools()).tools.find((t) => t.name === "get_secret");
    expect(tool?.description).toMatch(/enters your context/);
    expect(tool?.annotations?.destructiveHint).toBe(true);
    const got = await call(client, "get_secret", { key: "agent/db" });
    expect(got.structuredContent).toEqual({ key: "agent/db", value: SECRET });
    const outside = await call(client, "get_secret", { key: "other/x" });
    expect(outside.isError).toBe(true);
    expect(textOf(outside)).toMatch(/only keys under agent\//);
    expect(await readCount(vault, "other/x")).toBe(0);
  });

  it("every tool declares an outputSchema; put_secret's 409 is not about org secrets only", async () => {
    const { client } = await connect(vault, ["--allow-reveal", "--allow-env", "S", "--allow-command", "true"]);
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(9);
    for (const tool of tools) expect(tool.outputSchema?.type, tool.name).toBe("object");
    expect(tools.find((t) => t.name === "put_secret")?.description).toMatch(/409 when a live secret already has that key/);
  });
});

describe("mcp: only the tools the token may use", () => {
  let vault: VaultProcess;
  beforeAll(async () => {
    vault = await startVault(tempDir());
    expect((await vault.request("POST", "/secrets", { key: "agent/db", value: SECRET })).status).toBe(201);
  });
  afterEach(async () => {
    await closeMcpClients();
  });
  afterAll(async () => {
    await killChildren();
    cleanupTemp();
  });

  it("the recommended agent key (read, write, delete, prefix agent/): every offered tool works", async () => {
    const token = await scopedKey(vault, ["read", "write", "delete"], "agent/");
    const { client, stderr } = await connect(vault, ["--allow-env", "K", "--allow-command", "true"], token);
    expect(await toolNames(client)).toEqual(["delete_secret", "patch_secret", "put_secret", "request_secret", "run_command", "secret_info"]);
    const run = (await client.listTools()).tools.find((t) => t.name === "run_command");
    expect(Object.keys(run?.inputSchema.properties ?? {}).sort()).toEqual(["command", "env"]);
    for (const [name, args] of [
      ["put_secret", { key: "agent/k", value: "v-1234" }],
      ["secret_info", { key: "agent/k" }],
      ["patch_secret", { key: "agent/k", max_reads: 2 }],
      ["request_secret", { description: "a key for the agent" }],
      ["run_command", { command: ["true"], env: { K: "agent/k" } }],
      ["delete_secret", { key: "agent/k" }],
    ] as const) {
      const r = await call(client, name, args);
      expect(r.isError, `${name}: ${textOf(r)}`).toBeFalsy();
    }
    expect(stderr()).toMatch(/may not list: this key lacks the admin permission/);
    expect(stderr()).not.toContain(token);
  });

  it("a token the vault does not know costs one failed authentication at start, and every tool is offered to report it", async () => {
    const failed = async () =>
      ((await (await vault.request("GET", "/audit?action=auth.failed")).json()) as { entries: unknown[] }).entries.length;
    const before = await failed();
    const { client, stderr } = await connect(vault, [], "not-a-valid-token-123456");
    expect(await toolNames(client)).toEqual(["delete_secret", "list_secrets", "patch_secret", "put_secret", "request_secret", "secret_info", "share_secret"]);
    expect(await failed()).toBe(before + 1);
    const refused = await call(client, "secret_info", { key: "agent/db" });
    expect(textOf(refused)).toMatch(/\(401\)$/);
    // The start says so on stderr, without the token.
    expect(stderr()).toMatch(/warning: the vault at \S+ refused the token \(401[^\n]*every tool call will fail until it is fixed/);
    expect(stderr()).not.toContain("not-a-valid-token-123456");
  });

  it("a vault that cannot be reached is said on stderr at start", async () => {
    const { stderr } = await connect(vault, [], E2E_MASTER_KEY, "http://127.0.0.1:9");
    expect(stderr()).toMatch(/warning: cannot reach the vault at http:\/\/127\.0\.0\.1:9/);
  });

  it("a read-only key gets only secret_info; the probes change nothing", async () => {
    const before = await (await vault.request("GET", "/secrets")).json();
    const requestsBefore = await (await vault.request("GET", "/requests")).json();
    const token = await scopedKey(vault, ["read"]);
    const { client } = await connect(vault, [], token);
    expect(await toolNames(client)).toEqual(["secret_info"]);
    expect(await (await vault.request("GET", "/secrets")).json()).toEqual(before);
    expect(await (await vault.request("GET", "/requests")).json()).toEqual(requestsBefore);
  });

  it("with --org and a principal key: no share_secret, and no delete_secret for a writer", async () => {
    const org = (await (await vault.request("POST", "/orgs", { name: "agents" })).json()) as { id: string };
    const principal = (await (await vault.request("POST", `/orgs/${org.id}/principals`, { name: "bot", role: "writer" })).json()) as { id: string };
    const key = (await (await vault.request("POST", `/orgs/${org.id}/principals/${principal.id}/keys`, { name: "k" })).json()) as { key: string };
    const { client } = await connect(vault, ["--org", org.id], key.key);
    expect(await toolNames(client)).toEqual(["list_secrets", "patch_secret", "put_secret", "request_secret", "secret_info"]);
    const put = await call(client, "put_secret", { key: "team/x", value: "org value" });
    expect(put.isError, textOf(put)).toBeFalsy();
    // A request of the org (POST /orgs/<org>/requests), asked by the principal.
    const asked = await call(client, "request_secret", { description: "the team's deploy key" });
    expect(asked.isError, textOf(asked)).toBeFalsy();
    const requestId = (asked.structuredContent as { request_id: string }).request_id;
    const inOrg = (await (await vault.request("GET", `/orgs/${org.id}/requests/${requestId}`)).json()) as { asker: string };
    expect(inOrg.asker).toBe("bot");
    const info = await call(client, "secret_info", { key: "team/x" });
    expect(info.structuredContent).toMatchObject({ key: "team/x", exists: true, read_count: 0 });
  });
});
