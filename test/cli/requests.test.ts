import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sealAnswer } from "@ephemeral-vault/client";
import { BIN, childEnv, cleanupTemp, E2E_MASTER_KEY, killChildren, ROOT, startVault, tempDir } from "../support/e2e-helpers.js";
import type { VaultProcess } from "../support/e2e-helpers.js";

/**
 * `ephemeral-vault request` end to end (docs/cli.md "request"): the built
 * CLI against a real vault; the test answers as the answer page does
 * (sealAnswer to the request's public key, POST /r/<id>/answer).
 */

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

let vault: VaultProcess;

/** The environment of a CLI run: the vault's address and master key, and `config` as VAULT_CONFIG_DIR. */
function envOf(config: string, extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  return childEnv({ VAULT_ADDR: vault.url, VAULT_TOKEN: E2E_MASTER_KEY, VAULT_CONFIG_DIR: config, ...extra });
}

/** Runs the built CLI to completion. */
function cli(args: string[], config: string, extra: Record<string, string | undefined> = {}): CliResult {
  const result = spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, env: envOf(config, extra), input: "", encoding: "utf8", timeout: 20_000, killSignal: "SIGKILL" });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Starts the CLI without waiting (for `request wait`, which blocks); its stdout kept as bytes. */
function cliAsync(args: string[], config: string): Promise<{ code: number | null; stdout: Buffer; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: envOf(config), stdio: ["ignore", "pipe", "pipe"] });
  const out: Buffer[] = [];
  let err = "";
  child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
  child.stderr.setEncoding("utf8").on("data", (s: string) => (err += s));
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  return new Promise((resolve) =>
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(out), stderr: err });
    }),
  );
}

/** The request `id` as the API shows it (public key included). */
async function requestOf(id: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await vault.request("GET", `/requests/${id}`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Answers request `id` as the answer page does. */
async function answer(id: string, value: string): Promise<Response> {
  const { body } = await requestOf(id);
  return vault.request("POST", `/r/${id}/answer`, { value: await sealAnswer(String(body.public_key), id, value) }, null);
}

/** Makes a request with the CLI, `-q`: its id. */
function makeRequest(config: string, ...flags: string[]): string {
  const made = cli(["request", "a secret for the test", "-q", ...flags], config);
  expect(made.code, made.stderr).toBe(0);
  return made.stdout.trim();
}

const TRICKY = "line one\r\nline two 🔑\r\n\ttabbed — ünïcödé 日本語\n";

beforeAll(async () => {
  vault = await startVault(tempDir());
});
afterAll(async () => {
  await killChildren();
  cleanupTemp();
});

describe("ephemeral-vault request", () => {
  it("prints the link to send, says how to read the answer, and keeps the private key in a 0600 file of a 0700 directory", async () => {
    const config = join(tempDir(), "cfg");
    const made = cli(["request", "the billing API key", "--ttl", "2d", "--max-reads", "1"], config);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toMatch(/^https?:\/\/\S+\/r\/[0-9a-f]{64}\n$/);
    const id = /\/r\/([0-9a-f]{64})\n$/.exec(made.stdout)?.[1] ?? "";
    expect(made.stderr).toContain(`ephemeral-vault request wait ${id}`);
    const file = join(config, "requests", `${id}.json`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(config, "requests")).mode & 0o777).toBe(0o700);
    const kept = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
    expect(kept).toMatchObject({ v: 1, id, addr: vault.url, description: "the billing API key" });
    expect(String(kept.private_key)).toMatch(/^[A-Za-z0-9_-]{128}$/);
    // The private key is printed nowhere and the vault never sees it.
    expect(made.stdout + made.stderr).not.toContain(String(kept.private_key));
    const { body } = await requestOf(id);
    expect(body).toMatchObject({ id, state: "open", description: "the billing API key", ttl_seconds: 172_800, max_reads: 1 });
    expect(JSON.stringify(body)).not.toContain(String(kept.private_key));
  });

  it("-q prints only the id; a request without DESCRIPTION is a usage error", () => {
    const config = join(tempDir(), "cfg");
    expect(makeRequest(config)).toMatch(/^[0-9a-f]{64}$/);
    const bare = cli(["request"], config);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toMatch(/^ephemeral-vault: request needs a DESCRIPTION/);
  });

  it("request wait blocks until answered, then prints the value byte-exact (CR LF, emoji) and removes the spent key file", async () => {
    const config = join(tempDir(), "cfg");
    const id = makeRequest(config);
    const waiting = cliAsync(["request", "wait", id, "--interval", "1"], config);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect((await answer(id, TRICKY)).status).toBe(201);
    const done = await waiting;
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout.equals(Buffer.from(TRICKY, "utf8"))).toBe(true);
    expect(done.stderr).toBe("");
    expect(existsSync(join(config, "requests", `${id}.json`))).toBe(false);
  });

  it("a value at the answer size limit comes back whole", async () => {
    const config = join(tempDir(), "cfg");
    const id = makeRequest(config);
    // A value of VAULT_MAX_VALUE_BYTES (65536 bytes of UTF-8), with a multi-byte tail; well over it, the answer is refused.
    const value = `${"x".repeat(65_536 - 10)}🔑\r\n🔑`;
    expect(Buffer.byteLength(value, "utf8")).toBe(65_536);
    expect((await answer(id, `${value}${"y".repeat(256)}`)).status).toBe(413);
    expect((await answer(id, value)).status).toBe(201);
    const done = await cliAsync(["request", "wait", id], config);
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout.equals(Buffer.from(value, "utf8"))).toBe(true);
  });

  it("with --max-reads 2 the key file stays after the first read and goes after the last", async () => {
    const config = join(tempDir(), "cfg");
    const id = makeRequest(config, "--max-reads", "2");
    await answer(id, "read me twice");
    const file = join(config, "requests", `${id}.json`);
    expect((await cliAsync(["request", "wait", id], config)).stdout.toString()).toBe("read me twice");
    expect(existsSync(file)).toBe(true);
    expect((await cliAsync(["request", "wait", id], config)).stdout.toString()).toBe("read me twice");
    expect(existsSync(file)).toBe(false);
  });

  it("request wait --timeout gives up with exit 2, having read nothing; the key file stays", async () => {
    const config = join(tempDir(), "cfg");
    const id = makeRequest(config);
    const done = await cliAsync(["request", "wait", id, "--timeout", "2", "--interval", "1"], config);
    expect(done.code).toBe(2);
    expect(done.stdout.length).toBe(0);
    expect(done.stderr).toMatch(/^ephemeral-vault: no answer within 2 s; the request is still open \(nothing was read\); run: ephemeral-vault request wait [0-9a-f]{64}\n$/);
    expect(existsSync(join(config, "requests", `${id}.json`))).toBe(true);
    expect((await requestOf(id)).body.state).toBe("open");
  });

  it("request wait without the key file, or with a bad id, is a usage error (exit 2)", () => {
    const config = join(tempDir(), "cfg");
    const missing = cli(["request", "wait", "cd".repeat(32)], config);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/no key file for request/);
    expect(cli(["request", "wait", "../../etc/passwd"], config).code).toBe(2);
  });

  it("request wait on a request deleted meanwhile exits 1 and removes its key file", async () => {
    const config = join(tempDir(), "cfg");
    const id = makeRequest(config);
    expect((await vault.request("DELETE", `/requests/${id}`)).status).toBe(200);
    const done = await cliAsync(["request", "wait", id], config);
    expect(done.code).toBe(1);
    expect(done.stderr).toMatch(/\(404\): the request is gone [^\n]*its key file was removed\n$/);
    expect(existsSync(join(config, "requests", `${id}.json`))).toBe(false);
  });

  it("--org asks in the organization with a principal key; rm finds the org in the key file", async () => {
    const org = (await (await vault.request("POST", "/orgs", { name: "askers" })).json()) as { id: string };
    const principal = (await (await vault.request("POST", `/orgs/${org.id}/principals`, { name: "deploy-bot", role: "writer" })).json()) as { id: string };
    const { key } = (await (await vault.request("POST", `/orgs/${org.id}/principals/${principal.id}/keys`, { name: "k" })).json()) as { key: string };
    const config = join(tempDir(), "cfg");
    const made = cli(["request", "the team's deploy key", "-q", "--org", org.id], config, { VAULT_TOKEN: key });
    expect(made.code, made.stderr).toBe(0);
    const id = made.stdout.trim();
    const inOrg = (await (await vault.request("GET", `/orgs/${org.id}/requests/${id}`)).json()) as Record<string, unknown>;
    expect(inOrg).toMatchObject({ id, asker: "deploy-bot", state: "open" });
    expect((await requestOf(id)).status).toBe(404);
    expect(cli(["request", "ls", "--org", org.id], config, { VAULT_TOKEN: key }).stdout).toContain(id);
    await vault.request("POST", `/r/${id}/answer`, { value: await sealAnswer(String(inOrg.public_key), id, "team value") }, null);
    expect((await cliAsync(["request", "wait", id], config)).stdout.toString()).toBe("team value");
    // The writer role cannot delete (no d); the master key can, and the key file names the org.
    const id2 = cli(["request", "another", "-q", "--org", org.id], config, { VAULT_TOKEN: key }).stdout.trim();
    expect(cli(["request", "rm", id2], config)).toEqual({ code: 0, stdout: "", stderr: "" });
    expect((await vault.request("GET", `/orgs/${org.id}/requests/${id2}`)).status).toBe(404);
  });

  it("request ls shows id, state, expiry, whether the key is here, and the description; --json the entries", async () => {
    const config = join(tempDir(), "cfg");
    const open = makeRequest(config);
    const answered = makeRequest(config);
    await answer(answered, "listed-answer-value");
    const table = cli(["request", "ls"], config);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/^ID\s+STATE\s+EXPIRES\s+KEY\s+DESCRIPTION\n/);
    expect(table.stdout).toMatch(new RegExp(`${open}\\s+open\\s+\\d{4}-\\d\\d-\\d\\dT\\S+\\s+here\\s+a secret for the test\\n`));
    expect(table.stdout).toMatch(new RegExp(`${answered}\\s+answered\\s+`));
    expect(table.stdout).not.toContain("listed-answer-value");
    const json = JSON.parse(cli(["request", "ls", "--json"], config).stdout) as Array<Record<string, unknown>>;
    expect(json.find((r) => r.id === open)).toMatchObject({ state: "open", description: "a secret for the test" });
    // Another config dir holds no key for them.
    expect(cli(["request", "ls"], join(tempDir(), "other")).stdout).toMatch(new RegExp(`${open}\\s+open\\s+\\S+\\s+-\\s+`));
  });

  it("request rm deletes the request and its key file", async () => {
    const config = join(tempDir(), "cfg");
    const id = makeRequest(config);
    expect(cli(["request", "rm", id], config)).toEqual({ code: 0, stdout: "", stderr: "" });
    expect(existsSync(join(config, "requests", `${id}.json`))).toBe(false);
    expect((await requestOf(id)).status).toBe(404);
    const again = cli(["request", "rm", id], config);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/\(404\)\n$/);
  });

  it("request --help lists its subcommands and flags", () => {
    const help = cli(["request", "--help"], tempDir());
    expect(help.code).toBe(0);
    for (const word of ["wait", "ls", "rm", "--ttl", "--max-reads", "--quiet"]) expect(help.stdout, word).toContain(word);
    const wait = cli(["request", "wait", "--help"], tempDir());
    for (const word of ["--timeout", "--interval", "--addr"]) expect(wait.stdout, word).toContain(word);
  });
});
