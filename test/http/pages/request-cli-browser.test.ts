import { spawn, spawnSync } from "node:child_process";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeBrowser, launchBrowser, seriousA11yViolations, watchCsp } from "../../support/browser.js";
import { BIN, childEnv, cleanupTemp, E2E_MASTER_KEY, killChildren, ROOT, startVault, tempDir } from "../../support/e2e-helpers.js";
import type { VaultProcess } from "../../support/e2e-helpers.js";

// The whole request flow as people run it (docs/requests.md): the asker's CLI makes the request,
// the person asked answers in a real Chromium, the CLI's `request wait` prints the answer byte for
// byte. A browser's text area gives line breaks as LF (HTML's value normalization), so a CR LF
// typed there arrives as LF: the page says nothing else is changed, and the CLI's own CR LF case
// is in test/cli/requests.test.ts.

const MAX_VALUE_BYTES = 4096;

describeBrowser("a CLI-made request answered in Chromium and read by the CLI", () => {
  let browser: Browser;
  let vault: VaultProcess;
  let config: string;

  beforeAll(async () => {
    vault = await startVault(tempDir(), { env: { VAULT_MAX_VALUE_BYTES: String(MAX_VALUE_BYTES) } });
    browser = await launchBrowser();
    config = tempDir("ev-request-config-");
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await killChildren();
    cleanupTemp();
  });

  const env = () => childEnv({ VAULT_ADDR: vault.url, VAULT_TOKEN: E2E_MASTER_KEY, VAULT_CONFIG_DIR: config });

  function request(description: string): { id: string; url: string } {
    const made = spawnSync(process.execPath, [BIN, "request", description, "--ttl", "1h"], { cwd: ROOT, env: env(), input: "", encoding: "utf8", timeout: 20_000 });
    expect(made.status, made.stderr).toBe(0);
    const url = made.stdout.trim();
    const id = /\/r\/([0-9a-f]{64})$/.exec(url)?.[1];
    expect(id, url).toBeDefined();
    return { id: id as string, url };
  }

  function wait(id: string): Promise<{ code: number | null; stdout: Buffer; stderr: string }> {
    const child = spawn(process.execPath, [BIN, "request", "wait", id, "--timeout", "60s"], { cwd: ROOT, env: env(), stdio: ["ignore", "pipe", "pipe"] });
    const out: Buffer[] = [];
    let err = "";
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.setEncoding("utf8").on("data", (s: string) => (err += s));
    return new Promise((resolve) => child.once("close", (code) => resolve({ code, stdout: Buffer.concat(out), stderr: err })));
  }

  async function answerInBrowser(url: string, value: string): Promise<void> {
    const context = await browser.newContext();
    const page = await context.newPage();
    const violations = await watchCsp(page);
    await page.goto(url);
    expect(await seriousA11yViolations(page)).toEqual([]);
    await page.getByLabel("Your answer").fill(value);
    await page.getByRole("button", { name: "Send the answer" }).click();
    await page.getByText("Sent. Only the person who asked can open it.", { exact: true }).first().waitFor();
    expect(await violations()).toEqual([]);
    await context.close();
  }

  it("prints an answer with emoji and line breaks byte-exact; a second answer is refused in the page", async () => {
    const { id, url } = request("The staging database password");
    const waiting = wait(id);
    const value = "line one\nline two 🔑 ünïcödé\n\ttabbed\n";
    await answerInBrowser(url, value);
    const done = await waiting;
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout.equals(Buffer.from(value, "utf8"))).toBe(true);
    const context = await browser.newContext();
    const page = await context.newPage();
    const res = await page.goto(url);
    expect(res?.status()).toBe(404);
    await context.close();
  });

  it("carries an answer of exactly VAULT_MAX_VALUE_BYTES", async () => {
    const { id, url } = request("A long key");
    // Multi-byte characters up to the limit: 4-byte emoji, then ASCII to fill it exactly.
    const value = `${"🔐".repeat(100)}${"k".repeat(MAX_VALUE_BYTES - 400)}`;
    expect(Buffer.byteLength(value)).toBe(MAX_VALUE_BYTES);
    const waiting = wait(id);
    await answerInBrowser(url, value);
    const done = await waiting;
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout.equals(Buffer.from(value, "utf8"))).toBe(true);
  });
});
