import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "dotenv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, childEnv, cleanupTemp, cliAgainst, E2E_MASTER_KEY, killChildren, ROOT, startVault, tempDir } from "../support/e2e-helpers.js";
import type { VaultProcess } from "../support/e2e-helpers.js";

// run --mask / --no-mask, run --env-file and export, through the built command (docs/cli.md, "run", "export").

const cli = cliAgainst;

async function put(vault: VaultProcess, key: string, value: string, extra: Record<string, unknown> = {}): Promise<void> {
  const res = await vault.request("POST", "/secrets", { key, value, ...extra });
  expect(res.status).toBe(201);
}

async function readCount(vault: VaultProcess, key: string): Promise<number | undefined> {
  // The synchronous CLI runs before this block the event loop: the server may have closed the
  // pooled keep-alive connection meanwhile (VAULT_KEEP_ALIVE_TIMEOUT_MS idle) and fetch reuse it
  // before its close is read ("other side closed"). As HTTP clients do for an idempotent request
  // on a stale connection, the GET is sent once more, on a new one.
  const res = await vault.request("GET", "/secrets").catch((err: unknown) => {
    if ((err as { cause?: { code?: string } }).cause?.code !== "UND_ERR_SOCKET") throw err;
    return vault.request("GET", "/secrets");
  });
  const body = (await res.json()) as { secrets: Array<{ key?: string; read_count: number }> };
  return body.secrets.find((s) => s.key === key)?.read_count;
}

const SECRET = "p@ss word/+?&\"x";
/** A child that writes the secret in $S as is, in base64, URL-encoded and in JSON, to stdout and to stderr. */
const leaky = `const s = process.env.S; const t = [s, Buffer.from(s).toString("base64"), encodeURIComponent(s), JSON.stringify({s})].join("\\n");
process.stdout.write(t); process.stderr.write(t);`;

describe("run: masking, env files", () => {
  let vault: VaultProcess;
  let orgId: string;
  beforeAll(async () => {
    vault = await startVault(tempDir());
    await put(vault, "app/secret", SECRET);
    await put(vault, "app/short", "abc");
    await put(vault, "app/once", "burn after one read", { max_reads: 1 });
    await put(vault, "app/node_options", "--max-old-space-size=64");
    const org = (await (await vault.request("POST", "/orgs", { name: "inject" })).json()) as { id: string };
    orgId = org.id;
    expect((await vault.request("POST", `/orgs/${orgId}/secrets`, { key: "team/token", value: "org-token-value" })).status).toBe(201);
  });
  afterAll(async () => {
    await killChildren();
    cleanupTemp();
  });

  it("masks the injected value and its encodings in stdout and stderr by default when they are not terminals", () => {
    const result = cli(vault, ["run", "--env", "S=app/secret", "--", process.execPath, "-e", leaky]);
    expect(result.code).toBe(0);
    for (const stream of [result.stdout, result.stderr]) {
      expect(stream).not.toContain(SECRET);
      expect(stream).not.toContain(Buffer.from(SECRET).toString("base64"));
      expect(stream).not.toContain(encodeURIComponent(SECRET));
      expect(stream).not.toContain(JSON.stringify(SECRET).slice(1, -1));
      expect(stream.match(/<masked:S>/g)).toHaveLength(4);
    }
  });

  it("a masked run whose reader goes away ends: the child gets SIGPIPE as it would unmasked", () => {
    const env = childEnv({ VAULT_ADDR: vault.url, VAULT_TOKEN: E2E_MASTER_KEY });
    const line = `'${process.execPath}' '${BIN}' run --env S=app/secret -- sh -c 'while :; do echo "$S"; done' | head -2; echo "status=\${PIPESTATUS[0]}"`;
    const result = spawnSync("bash", ["-c", line], { cwd: ROOT, env, encoding: "utf8", timeout: 15_000, killSignal: "SIGKILL" });
    expect(result.stdout).toBe("<masked:S>\n<masked:S>\nstatus=141\n");
  });

  it("--no-mask passes the output through; --mask warns about values too short to mask", () => {
    const plain = cli(vault, ["run", "--no-mask", "--env", "S=app/secret", "--", process.execPath, "-e", "process.stdout.write(process.env.S)"]);
    expect(plain.stdout).toBe(SECRET);
    const short = cli(vault, ["run", "--mask", "--env", "S=app/short", "--", process.execPath, "-e", "process.stdout.write(process.env.S)"]);
    expect(short.code).toBe(0);
    expect(short.stderr).toMatch(/not masked, shorter than 4 characters: S/);
    expect(short.stderr).not.toContain("abc");
  });

  it("--env-file resolves vault:// and vault://org/ORG_ID/ references, passes plain values, and may set any name", () => {
    const file = join(tempDir(), ".env");
    writeFileSync(file, `# comment\nS=vault://app/secret\nPLAIN="just text"\nexport TEAM=vault://org/${orgId}/team/token\nNODE_OPTIONS=vault://app/node_options\n`);
    const print = "process.stdout.write(JSON.stringify([process.env.S, process.env.PLAIN, process.env.TEAM, process.env.NODE_OPTIONS]))";
    const result = cli(vault, ["run", "--no-mask", "--env-file", file, "--", process.execPath, "-e", print]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual([SECRET, "just text", "org-token-value", "--max-old-space-size=64"]);
    // --env wins over the file.
    const over = cli(vault, ["run", "--no-mask", "--env-file", file, "--env", "PLAIN=app/short", "--", process.execPath, "-e", "process.stdout.write(process.env.PLAIN)"]);
    expect(over.stdout).toBe("abc");
  });

  it("--env-file: a missing reference is found before anything is read", async () => {
    const file = join(tempDir(), ".env");
    writeFileSync(file, "A=vault://app/once\nB=vault://app/missing\n");
    const result = cli(vault, ["run", "--env-file", file, "--", process.execPath, "-e", "process.stdout.write('started')"]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("app/missing");
    expect(await readCount(vault, "app/once")).toBe(0);
  });
});

describe("export", () => {
  let vault: VaultProcess;
  const tricky = "it's a `tick` \"and\" $HOME\nline two # not a comment";
  beforeAll(async () => {
    vault = await startVault(tempDir());
    await put(vault, "exp/db_url", "postgres://u:p@db/app");
    await put(vault, "exp/quote", "it's");
    await put(vault, "exp/multi", "a\nb # c");
    await put(vault, "other/tricky", tricky);
  });
  afterAll(async () => {
    await killChildren();
    cleanupTemp();
  });

  it("--format dotenv: dotenv reads back every value exactly, and each read is counted", async () => {
    const result = cli(vault, ["export", "--prefix", "exp", "--only", "DB_URL,QUOTE,MULTI"]);
    expect(result.code).toBe(0);
    expect(parse(result.stdout)).toEqual({ DB_URL: "postgres://u:p@db/app", QUOTE: "it's", MULTI: "a\nb # c" });
    expect(await readCount(vault, "exp/db_url")).toBe(1);
    expect(result.stderr).not.toContain("postgres://");
  });

  it("--format json and --format shell give the same values (shell: through sh's eval)", () => {
    const json = cli(vault, ["export", "--format", "json", "--env", "T=other/tricky", "--env", "D=exp/db_url"]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ T: tricky, D: "postgres://u:p@db/app" });
    const shell = cli(vault, ["export", "--format", "shell", "--env", "T=other/tricky"]);
    expect(shell.code).toBe(0);
    const evaluated = spawnSync("sh", ["-c", `${shell.stdout}\nprintf %s "$T"`], { encoding: "utf8" });
    expect(evaluated.stdout).toBe(tricky);
  });

  it("a value no dotenv quoting can hold is refused with exit 2, naming the variable", () => {
    const result = cli(vault, ["export", "--env", "T=other/tricky"]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/T: .*dotenv cannot hold it/);
    expect(result.stderr).not.toContain("tick");
  });

  it("refuses a terminal stdout without --force (exit 2), before reading anything", async () => {
    const before = await readCount(vault, "exp/quote");
    const command = [process.execPath, BIN, "export", "--env", "Q=exp/quote"].map((w) => `'${w}'`).join(" ");
    const env = childEnv({ VAULT_ADDR: vault.url, VAULT_TOKEN: E2E_MASTER_KEY });
    const onTty = spawnSync("script", ["-qec", `${command}; echo "exit=$?"`, "/dev/null"], { cwd: ROOT, env, encoding: "utf8", timeout: 15_000 });
    expect(onTty.stdout).toMatch(/redirect stdout/);
    expect(onTty.stdout).toMatch(/exit=2/);
    expect(await readCount(vault, "exp/quote")).toBe(before);
    const forced = spawnSync("script", ["-qec", `${command} --force`, "/dev/null"], { cwd: ROOT, env, encoding: "utf8", timeout: 15_000 });
    expect(forced.stdout).toContain("Q=`it's`");
  });
});
