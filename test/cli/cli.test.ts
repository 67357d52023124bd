import { spawn, spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { BIN, childEnv, cleanupTemp, E2E_MASTER_KEY, killChildren, ROOT, startVault, tempDir } from "../support/e2e-helpers.js";
import type { VaultProcess } from "../support/e2e-helpers.js";
import { itSqlite } from "../support/helpers.js";

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI to completion against `vault` (VAULT_ADDR/VAULT_TOKEN set unless overridden). */
function cli(args: string[], options: { vault?: VaultProcess; input?: string; env?: Record<string, string | undefined>; cwd?: string } = {}): CliResult {
  const env = childEnv({
    ...(options.vault === undefined ? {} : { VAULT_ADDR: options.vault.url, VAULT_TOKEN: E2E_MASTER_KEY }),
    ...options.env,
  });
  const result = spawnSync(process.execPath, [BIN, ...args], {
    cwd: options.cwd ?? ROOT,
    env,
    input: options.input ?? "",
    encoding: "utf8",
    timeout: 15_000,
    killSignal: "SIGKILL",
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const TRICKY = "line one\nline two\r\n\ttabbed — ünïcödé 🔐 日本語\n\n";

describe("the command line against a real vault", () => {
  let vault: VaultProcess;
  beforeAll(async () => {
    vault = await startVault(tempDir());
  });
  afterAll(async () => {
    await killChildren();
    cleanupTemp();
  });

  it("put then get round-trips a value with newlines and unicode byte-exact (no newline added off a terminal)", () => {
    const put = cli(["put", "cli/tricky", TRICKY], { vault });
    expect(put.code).toBe(0);
    expect(put.stdout).toBe("");
    // A VALUE argument is readable by other local users while the command runs: one warning, never the value.
    expect(put.stderr).toMatch(/^ephemeral-vault: warning: VALUE on the command line is visible to other local users[^\n]*stdin\n$/);
    const got = cli(["get", "cli/tricky"], { vault });
    expect(got.code).toBe(0);
    expect(Buffer.from(got.stdout, "utf8").equals(Buffer.from(TRICKY, "utf8"))).toBe(true);
    const json = cli(["get", "cli/tricky", "--json"], { vault });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ key: "cli/tricky", value: TRICKY });
  });

  it("put reads the value from stdin when VALUE is omitted, byte-exact", () => {
    expect(cli(["put", "cli/stdin"], { vault, input: TRICKY }).code).toBe(0);
    expect(cli(["get", "cli/stdin"], { vault }).stdout).toBe(TRICKY);
  });

  it("--reads 1 burns the secret after one get; the second get exits 1 with the API's error", () => {
    expect(cli(["put", "cli/once", "burn me", "--reads", "1", "--ttl", "15m"], { vault }).code).toBe(0);
    expect(cli(["get", "cli/once"], { vault })).toEqual({ code: 0, stdout: "burn me", stderr: "" });
    const again = cli(["get", "cli/once"], { vault });
    expect(again.code).toBe(1);
    expect(again.stdout).toBe("");
    expect(again.stderr).toMatch(/^ephemeral-vault: [^\n]+ \(404\)\n$/);
  });

  it("ls shows key, reads and expiry but never the value; --json gives the entries; patch and rm change them", () => {
    expect(cli(["put", "cli/listed", "hidden-value-xyz", "--reads", "5", "--ttl", "2h"], { vault }).code).toBe(0);
    const table = cli(["ls", "--prefix", "cli/listed"], { vault });
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^KEY\s+READS\s+EXPIRES\ncli\/listed\s+0\/5\s+\d{4}-\d\d-\d\dT/);
    expect(table.stdout).not.toContain("hidden-value-xyz");
    expect(cli(["patch", "cli/listed", "--reads", "9"], { vault })).toEqual({ code: 0, stdout: "", stderr: "" });
    const json = JSON.parse(cli(["ls", "--prefix", "cli/listed", "--json"], { vault }).stdout) as Array<Record<string, unknown>>;
    expect(json).toHaveLength(1);
    expect(json[0]).toMatchObject({ key: "cli/listed", max_reads: 9 });
    expect(cli(["rm", "cli/listed"], { vault })).toEqual({ code: 0, stdout: "", stderr: "" });
    expect(cli(["get", "cli/listed"], { vault }).code).toBe(1);
    expect(cli(["patch", "cli/listed"], { vault }).code).toBe(2);
  });

  it("share --plain prints one url line, readable once by id (default --reads 1)", () => {
    const shared = cli(["share", "--plain"], { vault, input: "dead drop" });
    expect(shared.code).toBe(0);
    expect(shared.stdout).toMatch(/^https?:\/\/\S+\/s\/[0-9a-f]{64}\n$/);
    const id = /([0-9a-f]{64})\n$/.exec(shared.stdout)?.[1] ?? "";
    expect(cli(["get", id], { vault }).stdout).toBe("dead drop");
    expect(cli(["get", id], { vault }).code).toBe(1);
  });

  it("share encrypts end to end and prints a /s/<id>#<key> link; get <link> needs no token and reads it once", () => {
    const shared = cli(["share"], { vault, input: TRICKY });
    expect(shared.code).toBe(0);
    expect(shared.stdout).toMatch(/^https?:\/\/\S+\/s\/[0-9a-f]{64}#[A-Za-z0-9_-]{43}\n$/);
    const link = shared.stdout.trim();
    const id = /\/s\/([0-9a-f]{64})#/.exec(link)?.[1] ?? "";
    // The API's read gives the envelope, never the value.
    const raw = cli(["get", id, "--json"], { vault });
    expect(raw.stdout).not.toContain("line one");
    // ...which used the one read: share again and read through the link, with no token at all.
    const again = cli(["share"], { vault, input: TRICKY }).stdout.trim();
    const got = cli(["get", again], { env: {}, cwd: tempDir() });
    expect(got).toEqual({ code: 0, stdout: TRICKY, stderr: "" });
    const second = cli(["get", again], { env: {}, cwd: tempDir() });
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(/not available \(404\)/);
  });

  it("share refuses --org: a link is public and global", () => {
    const refused = cli(["share", "--org", "org_x"], { vault, input: "v" });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/--org/);
  });

  it("exit 1 carries the API's refusal; exit 2 for usage errors, a missing token and an unreachable vault (naming it)", () => {
    const refused = cli(["get", "cli/nothing-here"], { vault, env: { VAULT_TOKEN: "wrong-token-0123456789" } });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^ephemeral-vault: [^\n]+ \(401\)\n$/);
    const bad = cli(["put", "cli/x", "v", "--ttl", "10w"], { vault });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/bad duration/);
    expect(cli(["get"], { vault }).code).toBe(2);
    const noToken = cli(["get", "cli/x"], { env: { VAULT_ADDR: vault.url }, cwd: tempDir() });
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toMatch(/VAULT_TOKEN/);
    const down = cli(["get", "cli/x", "--addr", "http://127.0.0.1:9", "--token", "t"]);
    expect(down.code).toBe(2);
    expect(down.stderr).toMatch(/^ephemeral-vault: warning: --token on the command line is visible[^\n]*--token-file\nephemeral-vault: vault not reachable at http:\/\/127.0.0.1:9 /);
  });

  it("every command has --help with examples", () => {
    for (const command of ["put", "get", "share", "ls", "rm", "patch", "run", "mcp", "license", "audit"]) {
      const help = cli([command, "--help"]);
      expect(help.code, command).toBe(0);
      expect(help.stdout, command).toContain(`ephemeral-vault ${command}`);
      expect(help.stdout, command).toMatch(/Examples?:|Example MCP/);
    }
  });
});

describe("the master.key fallback", () => {
  afterEach(killChildren);
  afterAll(cleanupTemp);

  // A PostgreSQL node writes no master.key: its master key is a shared setting.
  itSqlite("with no token, the vault's own master.key ($VAULT_DATA_DIR or ./.vault) is used", async () => {
    const home = tempDir();
    const dataDir = join(home, ".vault");
    mkdirSync(dataDir);
    const vault = await startVault(dataDir, { env: { VAULT_MASTER_KEY: undefined } });
    const env = { VAULT_ADDR: vault.url };
    expect(cli(["put", "local/one", "v1"], { env, cwd: home }).code).toBe(0);
    expect(cli(["get", "local/one"], { env: { ...env, VAULT_DATA_DIR: dataDir } }).stdout).toBe("v1");
  });
});

describe("run", () => {
  let vault: VaultProcess;
  beforeAll(async () => {
    vault = await startVault(tempDir());
    for (const [key, value] of [
      ["app/db_url", "postgres://u:p@db/app"],
      ["app/api-key", "k-123 ü"],
    ]) {
      const res = await vault.request("POST", "/secrets", { key, value });
      expect(res.status).toBe(201);
    }
  });
  afterAll(async () => {
    await killChildren();
    cleanupTemp();
  });

  const printEnv = "process.stdout.write(JSON.stringify({a: process.env.DB_URL, b: process.env.API_KEY, c: process.env.OTHER})); process.exit(7)";

  it("injects two secrets with --env and exits with the child's code, printing only its output", () => {
    const result = cli(["run", "--no-mask", "--env", "DB_URL=app/db_url", "--env", "API_KEY=app/api-key", "--", process.execPath, "-e", printEnv], { vault });
    expect(result.code).toBe(7);
    expect(JSON.parse(result.stdout)).toEqual({ a: "postgres://u:p@db/app", b: "k-123 ü" });
    expect(result.stderr).toBe("");
  });

  it("--prefix --only maps the listed secrets under it to env names", () => {
    const result = cli(["run", "--no-mask", "--prefix", "app/", "--only", "DB_URL,API_KEY", "--", process.execPath, "-e", printEnv], { vault });
    expect(result.code).toBe(7);
    expect(JSON.parse(result.stdout)).toEqual({ a: "postgres://u:p@db/app", b: "k-123 ü" });
  });

  it("does not start the command when a secret is missing (exit 1)", () => {
    const result = cli(["run", "--env", "X=app/missing", "--", process.execPath, "-e", "process.stdout.write('started')"], { vault });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/\(404\)/);
  });

  it("exits 128 + N when the child dies of signal N", () => {
    const result = cli(["run", "--env", "DB_URL=app/db_url", "--", process.execPath, "-e", "process.kill(process.pid, 'SIGKILL')"], { vault });
    expect(result.code).toBe(137);
  });

  it("forwards SIGTERM to the child and exits 143 when it dies of it", async () => {
    const child = spawn(
      process.execPath,
      [BIN, "run", "--env", "DB_URL=app/db_url", "--", process.execPath, "-e", "process.stdout.write('ready'); setInterval(() => {}, 1000)"],
      { cwd: ROOT, env: childEnv({ VAULT_ADDR: vault.url, VAULT_TOKEN: E2E_MASTER_KEY }), stdio: ["ignore", "pipe", "pipe"] },
    );
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    await new Promise<void>((resolve) => child.stdout.on("data", (chunk: Buffer) => chunk.toString().includes("ready") && resolve()));
    child.kill("SIGTERM");
    expect(await exited).toBe(143);
  });
});
