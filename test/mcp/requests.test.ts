import { createHash } from "node:crypto";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { closeMcpClients, connectMcp } from "../support/mcp-client.js";
import { sealAnswer } from "@ephemeral-vault/client";
import { cleanupTemp, killChildren, startVault, tempDir } from "../support/e2e-helpers.js";
import type { VaultProcess } from "../support/e2e-helpers.js";

/**
 * request_secret and run_command's `request:<id>` (docs/mcp.md
 * "request_secret"): the agent asks a person for a secret and gives the
 * answer to a command; the model-facing results never hold the answer or the
 * request's private key. Driven by the SDK's own client over stdio.
 */

let vault: VaultProcess;

/** The MCP server as an agent starts it (test/support/mcp-client.ts). */
async function connect(args: string[] = []): Promise<Client> {
  return (await connectMcp({ addr: vault.url, args })).client;
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

function textOf(result: CallToolResult): string {
  const first = result.content[0];
  return first !== undefined && first.type === "text" ? first.text : "";
}

/** Answers request `id` as the answer page does (sealed to its public key). */
async function answer(id: string, value: string): Promise<void> {
  const request = (await (await vault.request("GET", `/requests/${id}`)).json()) as { public_key: string };
  const res = await vault.request("POST", `/r/${id}/answer`, { value: await sealAnswer(request.public_key, id, value) }, null);
  expect(res.status).toBe(201);
}

const ANSWER = "the answer: p@ss/+?&\"ü 🔑\r\nline two";
const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");
/** Prints $S as is, its base64 and JSON form, then the SHA-256 of it (to show the command got it whole). */
const LEAKY = `const s = process.env.S ?? ""; process.stdout.write([s, Buffer.from(s).toString("base64"), JSON.stringify({s}), "sha256:" + require("node:crypto").createHash("sha256").update(s, "utf8").digest("hex")].join("\\n"));`;
const RUN = ["--allow-env", "S", "--allow-command", `${process.execPath} -e **`];

/** What never reaches the model: the answer in any of the forms the command printed. */
function expectClean(result: CallToolResult): void {
  const all = JSON.stringify(result);
  expect(all).not.toContain("p@ss");
  expect(all).not.toContain(Buffer.from(ANSWER).toString("base64").slice(0, 16));
  expect(all).not.toContain(JSON.stringify(ANSWER).slice(1, 20));
  // Nor a private key (128 base64url characters) or a private link.
  expect(all).not.toMatch(/[A-Za-z0-9_-]{128}/);
  expect(all).not.toContain("/open#");
}

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

describe("request_secret", () => {
  it("makes a request and answers the link and id only; called with request_id it tells whether it was answered", async () => {
    const client = await connect();
    expect((await client.listTools()).tools.map((t) => t.name)).toContain("request_secret");
    const made = await call(client, "request_secret", { description: "the staging database password", ttl_seconds: 3600 });
    expect(made.isError, textOf(made)).toBeFalsy();
    expectClean(made);
    const { request_id: id, url, state, key_held } = made.structuredContent as { request_id: string; url: string; state: string; key_held: boolean };
    expect(id).toMatch(/^[0-9a-f]{64}$/);
    expect(url).toMatch(new RegExp(`/r/${id}$`));
    expect({ state, key_held }).toEqual({ state: "open", key_held: true });
    const stored = (await (await vault.request("GET", `/requests/${id}`)).json()) as Record<string, unknown>;
    expect(stored).toMatchObject({ description: "the staging database password", ttl_seconds: 3600, state: "open" });

    const open = await call(client, "request_secret", { request_id: id });
    expect(open.structuredContent).toMatchObject({ request_id: id, state: "open", answered_at: null });
    await answer(id, ANSWER);
    const answered = await call(client, "request_secret", { request_id: id });
    expect(answered.structuredContent).toMatchObject({ request_id: id, state: "answered", key_held: true });
    expect(String((answered.structuredContent as { use: string }).use)).toContain(`request:${id}`);
    expectClean(answered);
  });

  it("refuses both or neither of description and request_id", async () => {
    const client = await connect();
    expect((await call(client, "request_secret", {})).isError).toBe(true);
    expect((await call(client, "request_secret", { description: "x", request_id: "a".repeat(64) })).isError).toBe(true);
  });
});

describe("run_command with request:<id>", () => {
  it("gives the answer to the command, masked in what comes back; the answer's one read is then spent", async () => {
    const client = await connect(RUN);
    const made = await call(client, "request_secret", { description: "an API key for the command" });
    const id = (made.structuredContent as { request_id: string }).request_id;

    // Not answered yet: refused, nothing read.
    const early = await call(client, "run_command", { command: [process.execPath, "-e", LEAKY], env: { S: `request:${id}` } });
    expect(early.isError).toBe(true);
    expect(textOf(early)).toMatch(/not answered yet/);

    await answer(id, ANSWER);
    const ran = await call(client, "run_command", { command: [process.execPath, "-e", LEAKY], env: { S: `request:${id}` } });
    expect(ran.isError, textOf(ran)).toBeFalsy();
    expectClean(ran);
    const out = ran.structuredContent as { stdout: string; exit_code: number; injected: string[] };
    expect(out.exit_code).toBe(0);
    expect(out.injected).toEqual(["S"]);
    expect(out.stdout).toContain("<masked:S>");
    // The command had the answer whole: its hash is the answer's.
    expect(out.stdout).toContain(`sha256:${sha256(ANSWER)}`);

    // The one read is spent: the answer is burned and the server forgot its key.
    const again = await call(client, "run_command", { command: [process.execPath, "-e", LEAKY], env: { S: `request:${id}` } });
    expect(again.isError).toBe(true);
    expect(textOf(again)).toMatch(/its private key is not here/);
    const { answer_id } = (await (await vault.request("GET", `/requests/${id}`)).json()) as { answer_id: string };
    expect((await vault.request("GET", `/secrets/${answer_id}`)).status).toBe(404);
  });

  it("refuses a request another server made (its private key is not here), before reading anything", async () => {
    const maker = await connect();
    const made = await call(maker, "request_secret", { description: "made elsewhere" });
    const id = (made.structuredContent as { request_id: string }).request_id;
    await answer(id, ANSWER);
    const other = await connect(RUN);
    const refused = await call(other, "run_command", { command: [process.execPath, "-e", LEAKY], env: { S: `request:${id}` } });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/not made by this server/);
    const status = await call(other, "request_secret", { request_id: id });
    expect(status.structuredContent).toMatchObject({ state: "answered", key_held: false });
    // Still answered, unread.
    expect(((await (await vault.request("GET", `/requests/${id}`)).json()) as { state: string }).state).toBe("answered");
  });
});
