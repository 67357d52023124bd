import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupTemp, cliAgainst, E2E_MASTER_KEY, killChildren, startVault, tempDir } from "./e2e-helpers.js";
import type { VaultProcess } from "./e2e-helpers.js";

// `run` as a secret's writer could abuse it: a key that may write only under prod/ must not be
// able to run code on the operator's machine through the names --prefix derives (docs/cli.md, "run").

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

describe("run --prefix: names a secret's writer cannot abuse", () => {
  let vault: VaultProcess;
  let marker: string;
  beforeAll(async () => {
    vault = await startVault(tempDir());
    marker = join(tempDir(), "pwned");
    // What a write-only key under prod/ could store.
    await put(vault, "prod/BASH_ENV", `$(touch ${marker})`);
    await put(vault, "prod/node_options", "--require=/nonexistent/evil.js");
    await put(vault, "prod/LD_PRELOAD", "/nonexistent/evil.so");
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

  it("never sets a loader or interpreter variable: a bash child does not run BASH_ENV, a node child gets no NODE_OPTIONS", async () => {
    const viaBash = cli(vault, ["run", "--prefix", "prod", "--", "bash", "-c", "true"]);
    expect(viaBash.code).toBe(0);
    expect(existsSync(marker)).toBe(false);
    const result = cli(vault, [
      "run",
      "--no-mask",
      "--prefix",
      "prod",
      "--",
      process.execPath,
      "-e",
      printVars("BASH_ENV", "NODE_OPTIONS", "LD_PRELOAD", "PATH", "DB_URL", "HOME_DIR"),
    ]);
    expect(result.code).toBe(0);
    const vars = JSON.parse(result.stdout) as Record<string, string | null>;
    expect(vars.BASH_ENV).toBeNull();
    expect(vars.NODE_OPTIONS).toBeNull();
    expect(vars.LD_PRELOAD).toBeNull();
    expect(vars.PATH).toBe(process.env.PATH);
    expect(vars.DB_URL).toBe("postgres://db/app");
    expect(vars.HOME_DIR).toBe("h");
    // The names it set and the ones it skipped are on stderr; no value is.
    expect(result.stderr).toMatch(/DB_URL/);
    expect(result.stderr).toMatch(/BASH_ENV/);
    expect(result.stderr).not.toContain("postgres://db/app");
    expect(result.stderr).not.toContain(marker);
    // The skipped secrets were not read: no read counted.
    expect(await readCount(vault, "prod/BASH_ENV")).toBe(0);
    expect(await readCount(vault, "prod/node_options")).toBe(0);
  });

  it("never overrides a variable the environment already has, and skips names that are not [A-Z_][A-Z0-9_]*", () => {
    const result = cli(vault, ["run", "--prefix", "prod", "--", process.execPath, "-e", printVars("ALREADY_SET", "1ABC")], {
      ALREADY_SET: "from the operator",
    });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ ALREADY_SET: "from the operator", "1ABC": null });
    expect(result.stderr).toMatch(/ALREADY_SET/);
    expect(result.stderr).not.toContain("from the vault");
  });

  it("--env NAME=KEY stays the explicit way to set any name", () => {
    const result = cli(vault, ["run", "--no-mask", "--env", "NODE_OPTIONS=prod/node_options", "--", "sh", "-c", 'printf %s "$NODE_OPTIONS"']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("--require=/nonexistent/evil.js");
  });

  it("matches whole path segments: --prefix prod reads neither prod2/ nor production/", async () => {
    const result = cli(vault, ["run", "--prefix", "prod", "--", process.execPath, "-e", printVars("OTHER", "2_OTHER", "UCTION_OTHER")]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ OTHER: null, "2_OTHER": null, UCTION_OTHER: null });
    expect(await readCount(vault, "prod2/other")).toBe(0);
    expect(await readCount(vault, "production/other")).toBe(0);
  });

  it("two keys that map to one name: exit 2 naming both, nothing read, nothing started", async () => {
    const result = cli(vault, ["run", "--prefix", "dup", "--", process.execPath, "-e", "process.stdout.write('started')"]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("dup/a-b");
    expect(result.stderr).toContain("dup/a_b");
    expect(await readCount(vault, "dup/a-b")).toBe(0);
  });

  it("a prefix with no secret under it says so and starts nothing", () => {
    const result = cli(vault, ["run", "--prefix", "nothing-here", "--", process.execPath, "-e", "process.stdout.write('started')"]);
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
