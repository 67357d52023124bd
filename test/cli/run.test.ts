import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupTemp, cliAgainst, E2E_MASTER_KEY, killChildren, startVault, tempDir } from "../support/e2e-helpers.js";
import type { VaultProcess } from "../support/e2e-helpers.js";

// `run` as a secret's writer could abuse it: a key that may write only under prod/ must not be
// able to choose a variable of the operator's command (docs/cli.md, "What --prefix sets").

const cli = cliAgainst;

/** A child that prints the named variables of its environment as JSON (absent ones as null). */
const printVars = (...names: string[]) =>
  `process.stdout.write(JSON.stringify(Object.fromEntries(${JSON.stringify(names)}.map((n) => [n, process.env[n] ?? null]))))`;

async function put(vault: VaultProcess, key: string, value: string, extra: Record<string, unknown> = {}): Promise<void> {
  const res = await vault.request("POST", "/secrets", { key, value, ...extra });
  expect(res.status).toBe(201);
}

async function readCount(vault: VaultProcess, key: string): Promise<number | undefined> {
  const res = await vault.request("GET", `/secrets?prefix=${encodeURIComponent(key)}`);
  const body = (await res.json()) as { secrets: Array<{ key?: string; read_count: number }> };
  return body.secrets.find((s) => s.key === key)?.read_count;
}

describe("run --prefix: a secret's writer never chooses a variable", () => {
  let vault: VaultProcess;
  let marker: string;
  let makefileDir: string;
  beforeAll(async () => {
    vault = await startVault(tempDir());
    marker = join(tempDir(), "pwned");
    makefileDir = tempDir();
    writeFileSync(join(makefileDir, "Makefile"), "deploy:\n\t@printf deployed\n");
    // What a write-only key under prod/ could store: variables that make a tool run code.
    await put(vault, "prod/makeflags", `--eval=$(shell touch ${marker})`);
    await put(vault, "prod/BASH_ENV", `$(touch ${marker})`);
    await put(vault, "prod/node_options", "--require=/nonexistent/evil.js");
    await put(vault, "prod/cc", `sh -c 'touch ${marker}'`);
    await put(vault, "prod/path", "/nonexistent/bin");
    await put(vault, "prod/db_url", "postgres://db/app");
    await put(vault, "prod/HOME_DIR", "h");
    await put(vault, "prod/1abc", "bad name");
    await put(vault, "prod/already_set", "from the vault");
    await put(vault, "prod2/other", "not under prod");
    await put(vault, "production/other", "not under prod either");
    await put(vault, "dup/a-b", "one");
    await put(vault, "dup/a_b", "two");
  });
  afterAll(async () => {
    await killChildren();
    cleanupTemp();
  });

  it("a planted prod/makeflags does not reach make: only the names --only lists are set", async () => {
    const result = cli(vault, ["run", "--no-mask", "--prefix", "prod", "--only", "DB_URL", "--", "make", "-s", "-C", makefileDir, "deploy"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("deployed");
    expect(existsSync(marker)).toBe(false);
    // The keys it did not set are named on stderr, never read.
    expect(result.stderr).toMatch(/skipped prod\/makeflags: MAKEFLAGS is not named by --only/);
    expect(result.stderr).not.toContain(marker);
    expect(await readCount(vault, "prod/makeflags")).toBe(0);
    expect(await readCount(vault, "prod/db_url")).toBe(1);
  });

  it("sets exactly the listed names, whatever else is under the prefix (CC, BASH_ENV, NODE_OPTIONS, PATH)", async () => {
    const result = cli(vault, [
      "run",
      "--no-mask",
      "--prefix",
      "prod",
      "--only",
      "DB_URL, HOME_DIR",
      "--",
      process.execPath,
      "-e",
      printVars("MAKEFLAGS", "CC", "BASH_ENV", "NODE_OPTIONS", "PATH", "DB_URL", "HOME_DIR"),
    ]);
    expect(result.code).toBe(0);
    const vars = JSON.parse(result.stdout) as Record<string, string | null>;
    expect(vars).toEqual({ MAKEFLAGS: null, CC: null, BASH_ENV: null, NODE_OPTIONS: null, PATH: process.env.PATH ?? null, DB_URL: "postgres://db/app", HOME_DIR: "h" });
    expect(result.stderr).toMatch(/set DB_URL, HOME_DIR/);
    expect(result.stderr).not.toContain("postgres://db/app");
    expect(await readCount(vault, "prod/cc")).toBe(0);
    expect(await readCount(vault, "prod/BASH_ENV")).toBe(0);
  });

  it("--prefix without --only starts nothing, reads nothing, and names the --only to add", async () => {
    const bash = cli(vault, ["run", "--prefix", "prod", "--", "bash", "-c", "printf started"]);
    expect(bash.code).toBe(2);
    expect(bash.stdout).toBe("");
    expect(existsSync(marker)).toBe(false);
    expect(bash.stderr).toMatch(/--prefix prod sets only the variables you name: add --only [A-Z_,]*DB_URL/);
    expect(bash.stderr).toContain("MAKEFLAGS");
    expect(await readCount(vault, "prod/makeflags")).toBe(0);
    expect(await readCount(vault, "prod/BASH_ENV")).toBe(0);
  });

  it("a listed name that no key under the prefix sets is an error: nothing read, nothing started", async () => {
    const before = await readCount(vault, "prod/db_url");
    const result = cli(vault, ["run", "--prefix", "prod", "--only", "DB_URL,API_TOKEN", "--", process.execPath, "-e", "process.stdout.write('started')"]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/no secret under prod\/ for API_TOKEN/);
    expect(await readCount(vault, "prod/db_url")).toBe(before);
  });

  it("--only without --prefix, or with a name that is no variable name, is a usage error", () => {
    expect(cli(vault, ["run", "--only", "DB_URL", "--", "true"]).code).toBe(2);
    expect(cli(vault, ["run", "--prefix", "prod", "--only", "DB-URL", "--", "true"]).code).toBe(2);
  });

  it("never overrides a variable the environment already has, even a listed one", () => {
    const result = cli(vault, ["run", "--prefix", "prod", "--only", "ALREADY_SET,DB_URL", "--", process.execPath, "-e", printVars("ALREADY_SET")], {
      ALREADY_SET: "from the operator",
    });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ ALREADY_SET: "from the operator" });
    expect(result.stderr).toMatch(/ALREADY_SET is already set/);
    expect(result.stderr).not.toContain("from the vault");
  });

  it("--env NAME=KEY stays the explicit way to set any name", () => {
    const result = cli(vault, ["run", "--no-mask", "--env", "NODE_OPTIONS=prod/node_options", "--", "sh", "-c", 'printf %s "$NODE_OPTIONS"']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("--require=/nonexistent/evil.js");
  });

  it("matches whole path segments: --prefix prod reads neither prod2/ nor production/", async () => {
    const result = cli(vault, ["run", "--prefix", "prod", "--only", "DB_URL", "--", process.execPath, "-e", printVars("OTHER", "2_OTHER", "UCTION_OTHER")]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ OTHER: null, "2_OTHER": null, UCTION_OTHER: null });
    expect(await readCount(vault, "prod2/other")).toBe(0);
    expect(await readCount(vault, "production/other")).toBe(0);
  });

  it("two keys that map to one listed name: exit 2 naming both, nothing read, nothing started", async () => {
    const result = cli(vault, ["run", "--prefix", "dup", "--only", "A_B", "--", process.execPath, "-e", "process.stdout.write('started')"]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("dup/a-b");
    expect(result.stderr).toContain("dup/a_b");
    expect(await readCount(vault, "dup/a-b")).toBe(0);
  });

  it("a prefix with no secret under it says so and starts nothing", () => {
    const result = cli(vault, ["run", "--prefix", "nothing-here", "--only", "X", "--", process.execPath, "-e", "process.stdout.write('started')"]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/no secret under nothing-here\//);
  });
});

describe("run: the runner's credential and reads", () => {
  let vault: VaultProcess;
  beforeAll(async () => {
    vault = await startVault(tempDir());
    await put(vault, "app/once", "one read only", { max_reads: 1 });
    await put(vault, "app/db_url", "postgres://db/app");
  });
  afterAll(async () => {
    await killChildren();
    cleanupTemp();
  });

  it("the child gets no VAULT_TOKEN, VAULT_ADDR or VAULT_ORG unless --keep-vault-env", () => {
    const printed = printVars("VAULT_TOKEN", "VAULT_ADDR", "VAULT_ORG", "DB_URL");
    const stripped = cli(vault, ["run", "--no-mask", "--env", "DB_URL=app/db_url", "--", process.execPath, "-e", printed], { VAULT_ORG: "" });
    expect(stripped.code).toBe(0);
    expect(JSON.parse(stripped.stdout)).toEqual({ VAULT_TOKEN: null, VAULT_ADDR: null, VAULT_ORG: null, DB_URL: "postgres://db/app" });
    const kept = cli(vault, ["run", "--no-mask", "--keep-vault-env", "--env", "DB_URL=app/db_url", "--", process.execPath, "-e", printed]);
    expect(kept.code).toBe(0);
    expect(JSON.parse(kept.stdout)).toMatchObject({ VAULT_TOKEN: E2E_MASTER_KEY, VAULT_ADDR: vault.url });
  });

  it("a missing secret is named and found before any read: a one-read secret named with it is not burned", async () => {
    const result = cli(vault, ["run", "--env", "A=app/once", "--env", "B=app/missing", "--", process.execPath, "-e", "process.stdout.write('started')"]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("app/missing");
    expect(result.stderr).toMatch(/\(404\)/);
    expect(await readCount(vault, "app/once")).toBe(0);
    const after = cli(vault, ["run", "--no-mask", "--env", "A=app/once", "--", "sh", "-c", 'printf %s "$A"']);
    expect(after.stdout).toBe("one read only");
  });
});
