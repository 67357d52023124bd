import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VaultClient } from "@ephemeral-vault/client";
import { BIN, childEnv, cleanupTemp, E2E_MASTER_KEY, killChildren, ROOT, startVault, tempDir } from "../support/e2e-helpers.js";
import type { VaultProcess } from "../support/e2e-helpers.js";

// Files in dead drops from the command line (docs/cli.md, "Files"; docs/share.md, "Files"):
// `share --file F` and `get <link> -o F`, spawning bin/ephemeral-vault.js against a real vault.

interface Result {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

/** Runs the built CLI to completion; stdout kept as bytes. */
function cli(args: string[], options: { vault?: VaultProcess; cwd?: string; env?: Record<string, string | undefined> } = {}): Result {
  const env = childEnv({ ...(options.vault === undefined ? {} : { VAULT_ADDR: options.vault.url, VAULT_TOKEN: E2E_MASTER_KEY }), ...options.env });
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: options.cwd ?? ROOT, env, input: "", timeout: 60_000, killSignal: "SIGKILL", maxBuffer: 64 * 1024 * 1024 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr.toString("utf8") };
}

const sha256 = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
const MiB = 1024 * 1024;

/** `n` bytes cycling through all 256 values. */
function allBytes(n: number): Buffer {
  const out = Buffer.alloc(n);
  for (let i = 0; i < n; i++) out[i] = i & 0xff;
  return out;
}

function share(vault: VaultProcess, file: string, extra: string[] = []): string {
  const shared = cli(["share", "--file", file, ...extra], { vault });
  expect(shared.code, shared.stderr).toBe(0);
  const link = shared.stdout.toString("utf8");
  expect(link).toMatch(/^https?:\/\/\S+\/s\/[0-9a-f]{64}#[A-Za-z0-9_-]{43}(\.p)?\.f\n$/);
  return link.trim();
}

describe("files from the command line", () => {
  let vault: VaultProcess;
  beforeAll(async () => {
    vault = await startVault(tempDir());
  });
  afterAll(async () => {
    await killChildren();
    cleanupTemp();
  });

  it("10 MiB of all 256 byte values go CLI to CLI byte-exact (SHA-256), to -o FILE with mode 0600 and to a pipe", () => {
    const dir = tempDir();
    const bytes = allBytes(10 * MiB);
    const src = join(dir, "report.pdf");
    writeFileSync(src, bytes);
    const out = join(dir, "received.pdf");
    const got = cli(["get", share(vault, src), "-o", out], { cwd: dir, env: {} });
    expect(got.code, got.stderr).toBe(0);
    expect(got.stdout.length).toBe(0);
    expect(got.stderr).toBe(`ephemeral-vault: a file: report.pdf (application/pdf, ${10 * MiB} bytes), saved as ${out}\n`);
    expect(sha256(readFileSync(out))).toBe(sha256(bytes));
    expect(statSync(out).mode & 0o777).toBe(0o600);
    // Without -o, off a terminal, the bytes go to stdout.
    const piped = cli(["get", share(vault, src)], { cwd: dir, env: {} });
    expect(piped.code, piped.stderr).toBe(0);
    expect(sha256(piped.stdout)).toBe(sha256(bytes));
  });

  it("-o refuses an existing file before the read (nothing spent); --force overwrites it", () => {
    const dir = tempDir();
    const src = join(dir, "notes.txt");
    writeFileSync(src, "file content\n");
    const out = join(dir, "exists.txt");
    writeFileSync(out, "keep me", { mode: 0o644 });
    const link = share(vault, src);
    const refused = cli(["get", link, "-o", out], { cwd: dir, env: {} });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/exists; give --force to overwrite it \(nothing was read\)/);
    expect(readFileSync(out, "utf8")).toBe("keep me");
    const forced = cli(["get", link, "-o", out, "--force"], { cwd: dir, env: {} });
    expect(forced.code, forced.stderr).toBe(0);
    expect(readFileSync(out, "utf8")).toBe("file content\n");
    expect(statSync(out).mode & 0o777).toBe(0o600);
    // A failed read (the link is burned now) leaves no -o file behind.
    const gone = join(dir, "never.txt");
    expect(cli(["get", link, "-o", gone], { cwd: dir, env: {} }).code).toBe(1);
    expect(existsSync(gone)).toBe(false);
  });

  it("keeps the name and the media type; a passphrase works for files; a text link with -o writes its text", async () => {
    const dir = tempDir();
    const src = join(dir, "diagram.svg");
    writeFileSync(src, "<svg/>");
    const passFile = join(dir, "pass.txt");
    writeFileSync(passFile, "a long enough passphrase\n");
    const link = share(vault, src, ["--passphrase-file", passFile]);
    expect(link.endsWith(".p.f")).toBe(true);
    const opened = await new VaultClient({ addr: vault.url }).open(link, { passphrase: "a long enough passphrase" });
    expect(opened).toEqual({ file: { name: "diagram.svg", type: "image/svg+xml", bytes: expect.any(Uint8Array) } });
    const text = cli(["share", "plain text value"], { vault }).stdout.toString().trim();
    const out = join(dir, "value.txt");
    expect(cli(["get", text, "-o", out], { cwd: dir, env: {} }).code).toBe(0);
    expect(readFileSync(out, "utf8")).toBe("plain text value");
  });

  it("an unknown extension is application/octet-stream; refusals: --file with a VALUE or --plain, an unreadable file, -o without a link", async () => {
    const dir = tempDir();
    const src = join(dir, "blob.zzqq");
    writeFileSync(src, allBytes(300));
    const opened = await new VaultClient({ addr: vault.url }).open(share(vault, src));
    expect(typeof opened !== "string" && opened.file.type).toBe("application/octet-stream");
    expect(cli(["share", "v", "--file", src], { vault }).stderr).toMatch(/not both/);
    expect(cli(["share", "--plain", "--file", src], { vault }).stderr).toMatch(/--plain cannot take --file/);
    const missing = cli(["share", "--file", join(dir, "missing.bin")], { vault });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--file: cannot read .*missing\.bin \(ENOENT\)/);
    expect(cli(["get", "some/key", "-o", join(dir, "x")], { vault }).code).toBe(2);
  });

  it("a file over the vault's limit is refused with the limit in the message", () => {
    const dir = tempDir();
    const src = join(dir, "big.bin");
    writeFileSync(src, allBytes(10 * MiB + 1));
    const refused = cli(["share", "--file", src], { vault });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/the file may be at most 10485760 bytes/);
  });
});

describe("a file at a terminal", () => {
  let vault: VaultProcess;
  beforeAll(async () => {
    vault = await startVault(tempDir());
  });
  afterAll(async () => {
    await killChildren();
    cleanupTemp();
  });

  const runAtTerminal = (dir: string, args: string) =>
    spawnSync("script", ["-qefc", `exec '${process.execPath}' '${BIN}' ${args}`, "/dev/null"], {
      cwd: dir,
      env: childEnv({ SHELL: "/bin/sh", TERM: "dumb" }),
      encoding: "utf8",
      timeout: 30_000,
    });

  it("a link that says it holds a file (.f) is refused without -o before the read: nothing spent, then -o saves it", async () => {
    const dir = tempDir();
    const src = join(tempDir(), "photo.png");
    const bytes = allBytes(4096);
    writeFileSync(src, bytes);
    const link = share(vault, src, ["--reads", "1"]);
    const refused = runAtTerminal(dir, `get '${link}'`);
    expect(refused.status, refused.stdout).toBe(2);
    expect(refused.stdout).toContain("this link holds a file: give -o FILE to save it, or redirect stdout (nothing was read)");
    expect(readdirSync(dir)).toEqual([]);
    // Nothing was spent: the one read is still there, and -o (also at the terminal) saves it.
    const id = /\/s\/([0-9a-f]{64})/.exec(link)?.[1] ?? "";
    expect(await new VaultClient({ addr: vault.url, token: E2E_MASTER_KEY }).exists(id)).toBe(true);
    const saved = runAtTerminal(dir, `get '${link}' -o got.png`);
    expect(saved.status, saved.stdout).toBe(0);
    expect(sha256(readFileSync(join(dir, "got.png")))).toBe(sha256(bytes));
  });

  it("a file link made without the hint is not printed: it is saved in the current directory under its sanitized name, never over a file", () => {
    const dir = tempDir();
    const src = join(tempDir(), "photo.png");
    const bytes = allBytes(4096);
    writeFileSync(src, bytes);
    // A link from a sender that does not write `.f` (made before it): get learns it is a file only by the read.
    const run = (link: string) => runAtTerminal(dir, `get '${link.replace(/\.f$/, "")}'`);
    const first = run(share(vault, src));
    expect(first.status, first.stdout).toBe(0);
    expect(first.stdout).toContain("not printed to the terminal: saved as ./photo.png");
    expect(sha256(readFileSync(join(dir, "photo.png")))).toBe(sha256(bytes));
    const second = run(share(vault, src));
    expect(second.stdout).toContain("saved as ./photo (1).png");
    expect(sha256(readFileSync(join(dir, "photo (1).png")))).toBe(sha256(bytes));
  });
});
