import { spawn } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeBrowser, launchBrowser, seriousA11yViolations, startRecordingProxy, watchCsp } from "../../support/browser.js";
import type { RecordingProxy } from "../../support/browser.js";
import { BIN, childEnv, cleanupTemp, E2E_MASTER_KEY, killChildren, ROOT, startVault, tempDir } from "../../support/e2e-helpers.js";
import type { VaultProcess } from "../../support/e2e-helpers.js";
import { TEST_ENGINE } from "../../support/helpers.js";

// The share pages in a real Chromium (docs/share.md): a link preview or a page load never
// counts a read, the Reveal button is the one read, the value is decrypted in the browser,
// and neither the value nor the link's key ever reaches the server.

/**
 * Runs the built CLI, asynchronously (the recording proxy answers from this
 * process's event loop); `vault` set: VAULT_ADDR and the master key.
 */
function cli(
  args: string[],
  options: { vault?: VaultProcess; input?: string; env?: Record<string, string> } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = childEnv({ ...(options.vault === undefined ? {} : { VAULT_ADDR: options.vault.url, VAULT_TOKEN: E2E_MASTER_KEY }), ...options.env });
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env, stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (s: string) => (stdout += s));
  child.stderr.setEncoding("utf8").on("data", (s: string) => (stderr += s));
  child.stdin.end(options.input ?? "");
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  return new Promise((resolve) =>
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

describeBrowser("the share pages in Chromium", () => {
  let browser: Browser;
  let vault: VaultProcess;
  let proxy: RecordingProxy;
  let dataDir: string;
  /** Every plaintext value and link key used here: none may reach the server. */
  const secretsUsed: string[] = [];

  beforeAll(async () => {
    proxy = await startRecordingProxy();
    dataDir = tempDir();
    vault = await startVault(dataDir, { env: { VAULT_PUBLIC_URL: proxy.url, VAULT_LOG_LEVEL: "debug" } });
    proxy.target(vault.url);
    browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await proxy?.close();
    await killChildren();
    cleanupTemp();
  });

  /** Shares `value` with the CLI (through the proxy, as a user would): the link. */
  async function share(value: string, extra: string[] = []): Promise<string> {
    const r = await cli(["share", "--addr", proxy.url, ...extra], { vault, input: value });
    expect(r.code, r.stderr).toBe(0);
    const link = r.stdout.trim();
    secretsUsed.push(value, link.split("#")[1] ?? "");
    return link;
  }

  async function meta(id: string): Promise<{ read_count: number } | undefined> {
    const res = await vault.request("GET", "/secrets");
    const body = (await res.json()) as { secrets: Array<{ id?: string; read_count: number }> };
    return body.secrets.find((s) => s.id === id);
  }

  const idOf = (link: string) => /\/s\/([0-9a-f]{64})/.exec(link)?.[1] ?? "";

  async function reveal(page: Page): Promise<string> {
    await page.getByRole("button", { name: "Reveal the secret" }).click();
    const field = page.locator("#value");
    await field.waitFor({ state: "visible" });
    return (await field.textContent()) ?? "";
  }

  it("a plain GET of the link and a Chromium load without a click count no read", async () => {
    const link = await share("preview-proof value", ["--reads", "1"]);
    const id = idOf(link);
    // A link preview fetches the url: twice, with and without the fragment.
    for (const url of [link, link.split("#")[0] ?? link]) {
      const res = await fetch(url);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^text\/html/);
      const html = await res.text();
      expect(html).not.toContain("preview-proof value");
      expect(html).not.toMatch(/og:|twitter:/);
    }
    const page = await browser.newPage();
    await page.goto(link);
    await expect(page.getByRole("button", { name: "Reveal the secret" })).toBeDefined();
    await page.reload();
    await page.close();
    expect((await meta(id))?.read_count).toBe(0);
  });

  it("a click reveals and burns a one-read secret; a second visit shows 'not available' (404); the fragment leaves the address bar", async () => {
    const link = await share("burn after reading", ["--reads", "1"]);
    const page = await browser.newPage();
    const violations = await watchCsp(page);
    await page.goto(link);
    expect(await reveal(page)).toBe("burn after reading");
    await expect.poll(() => page.locator("#after").textContent()).toMatch(/last read/);
    expect(page.url()).not.toContain("#");
    expect(await meta(idOf(link))).toBeUndefined();
    expect(await violations()).toEqual([]);
    await page.close();
    const second = await browser.newPage();
    const again = await second.goto(link);
    expect(again?.status()).toBe(404);
    expect(await second.locator("h1").textContent()).toBe("This secret is not available");
    await second.close();
  });

  it("the CSP watch sees a violation when there is one (an inline script the policy blocks)", async () => {
    const page = await browser.newPage();
    const violations = await watchCsp(page);
    await page.goto(`${proxy.url}/`);
    await page.evaluate(() => {
      const inline = document.createElement("script");
      inline.textContent = "document.title = 'injected'";
      document.body.append(inline);
    });
    await expect.poll(async () => (await violations()).length).toBeGreaterThan(0);
    expect((await violations())[0]).toMatch(/^script-src/);
    expect(await page.title()).not.toBe("injected");
    await page.close();
  });

  it("CLI share to browser reveal is byte-exact: newlines, emoji, 64 KiB", async () => {
    const unit = "line one\r\n\ttab — ünïcödé 🔐 日本語\n\n";
    let value = unit.repeat(Math.floor((65_536 - 16) / Buffer.byteLength(unit, "utf8")));
    value += "x".repeat(65_536 - 8 - Buffer.byteLength(value, "utf8")) + "🔐end\n";
    expect(Buffer.byteLength(value, "utf8")).toBe(65_536 - 8 + 4 + 4);
    const link = await share(value);
    const page = await browser.newPage();
    await page.goto(link);
    expect(await reveal(page)).toBe(value);
    await page.close();
  });

  it("browser create to CLI get <url>: the recipient needs no token", async () => {
    const page = await browser.newPage();
    const violations = await watchCsp(page);
    await page.goto(`${proxy.url}/`);
    await page.getByLabel("Access token").fill(E2E_MASTER_KEY);
    const value = "made in the browser\nsecond line ✓";
    secretsUsed.push(value);
    await page.getByLabel("Secret", { exact: true }).fill(value);
    await page.getByLabel("Reads").fill("2");
    await page.getByRole("button", { name: "Create the link" }).click();
    const linkField = page.locator("#link");
    await linkField.waitFor({ state: "visible" });
    const link = await linkField.inputValue();
    secretsUsed.push(link.split("#")[1] ?? "");
    expect(link).toMatch(new RegExp(`^${proxy.url}/s/[0-9a-f]{64}#[A-Za-z0-9_-]{43}$`));
    expect(await violations()).toEqual([]);
    await page.close();
    const got = await cli(["get", link], { env: {} });
    expect(got).toEqual({ code: 0, stdout: value, stderr: "" });
  });

  it("a passphrase link: wrong then right uses one read, and the CLI reads it too", async () => {
    const dir = tempDir();
    const passFile = join(dir, "pass");
    writeFileSync(passFile, "correct horse battery\n");
    const link = await share("locked value ✓", ["--reads", "3", "--passphrase-file", passFile]);
    expect(link).toMatch(/\.p$/);
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(link);
    // The passphrase is asked before the read (the reveal proof needs it); a wrong one is refused and spends nothing.
    const pass = page.getByLabel("Passphrase");
    await pass.waitFor({ state: "visible" });
    // One button before the read: Reveal (Enter in the field is Reveal too); Decrypt is for a kept ciphertext after it.
    expect(await page.getByRole("button", { name: "Decrypt" }).isVisible()).toBe(false);
    await pass.fill("wrong passphrase");
    await pass.press("Enter");
    await expect.poll(() => page.locator("#error").textContent(), { timeout: 15_000 }).toMatch(/Wrong passphrase, try again/);
    expect(await seriousA11yViolations(page), "refused passphrase").toEqual([]);
    expect((await meta(idOf(link)))?.read_count).toBe(0);
    await pass.fill("correct horse battery");
    await page.getByRole("button", { name: "Reveal the secret" }).click();
    await page.locator("#value").waitFor({ state: "visible", timeout: 15_000 });
    expect(await page.locator("#value").textContent()).toBe("locked value ✓");
    await context.close();
    expect((await meta(idOf(link)))?.read_count).toBe(1);
    expect((await cli(["get", link, "--passphrase-file", passFile], { env: {} })).stdout).toBe("locked value ✓");
    expect((await meta(idOf(link)))?.read_count).toBe(2);
  });

  it("the wrong passphrase that reaches the sender's --max-failures says the secret was destroyed, and offers no retry", async () => {
    const dir = tempDir();
    const passFile = join(dir, "pass");
    writeFileSync(passFile, "the right one\n");
    const link = await share("burned by refusals", ["--reads", "2", "--passphrase-file", passFile, "--max-failures", "2"]);
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(link);
    const pass = page.getByLabel("Passphrase");
    await pass.waitFor({ state: "visible" });
    await pass.fill("wrong once");
    await page.getByRole("button", { name: "Reveal the secret" }).click();
    // The first refusal leaves it: the person may try again.
    await expect.poll(() => page.locator("#error").textContent(), { timeout: 15_000 }).toMatch(/Wrong passphrase, try again/);
    expect(await meta(idOf(link))).toBeDefined();
    await pass.fill("wrong twice");
    await page.getByRole("button", { name: "Reveal the secret" }).click();
    await expect.poll(() => page.locator("#error").textContent(), { timeout: 15_000 }).toMatch(/^The secret was destroyed: its sender allowed only so many wrong tries/);
    expect(await page.getByRole("button", { name: "Reveal the secret" }).isVisible()).toBe(false);
    expect(await page.getByLabel("Passphrase").isVisible()).toBe(false);
    expect(await page.locator("#facts").isVisible()).toBe(false);
    expect(await seriousA11yViolations(page), "destroyed after refusals").toEqual([]);
    await context.close();
    expect(await meta(idOf(link))).toBeUndefined();
  });

  it("a 429 from the reveal (the share pages' limiter) says so, keeps the whole link in the address bar and spends nothing", async () => {
    const link = await share("rate limited value", ["--reads", "1"]);
    const context = await browser.newContext();
    const page = await context.newPage();
    // The limiter's answer, as the vault gives it to an address over its limit (reveal-proof.test.ts makes the real one).
    await page.route("**/reveal", (route) =>
      route.fulfill({ status: 429, headers: { "Retry-After": "60" }, contentType: "application/json", body: JSON.stringify({ error: "too many refused requests from this address" }) }),
    );
    await page.goto(link);
    await page.getByRole("button", { name: "Reveal the secret" }).click();
    await expect.poll(() => page.locator("#error").textContent(), { timeout: 15_000 }).toMatch(/^Too many attempts\. Too many tries from your address were refused: links that do not exist, or reveals with a wrong passphrase/);
    expect(page.url()).toBe(link);
    expect(await page.getByRole("button", { name: "Reveal the secret" }).isEnabled()).toBe(true);
    expect(await seriousA11yViolations(page), "429").toEqual([]);
    await context.close();
    expect((await meta(idOf(link)))?.read_count).toBe(0);
  });

  it("a link without its key or with a damaged key shows no Reveal and spends nothing; so does the CLI", async () => {
    const link = await share("whole link only", ["--reads", "1"]);
    const [bare] = link.split("#");
    for (const url of [bare ?? "", link.slice(0, -5)]) {
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(url);
      await expect.poll(() => page.locator("#error").textContent(), { timeout: 15_000 }).toMatch(/incomplete or damaged/);
      expect(await page.locator("#reveal").isVisible()).toBe(false);
      expect(await seriousA11yViolations(page), `incomplete link ${url}`).toEqual([]);
      await context.close();
    }
    expect((await cli(["get", bare ?? ""], { env: {} })).code).not.toBe(0);
    expect((await cli(["get", link.slice(0, -5)], { env: {} })).code).not.toBe(0);
    expect((await meta(idOf(link)))?.read_count).toBe(0);
    expect((await cli(["get", link], { env: {} })).stdout).toBe("whole link only");
  });

  it("the CLI's get with a wrong --passphrase-file exits non-zero and spends nothing", async () => {
    const dir = tempDir();
    const right = join(dir, "right");
    const wrong = join(dir, "wrong");
    writeFileSync(right, "a right passphrase here\n");
    writeFileSync(wrong, "a wrong passphrase here\n");
    const link = await share("guarded", ["--reads", "1", "--passphrase-file", right]);
    const refused = await cli(["get", link, "--passphrase-file", wrong], { env: {} });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/wrong passphrase/i);
    expect((await meta(idOf(link)))?.read_count).toBe(0);
    expect((await cli(["get", link, "--passphrase-file", right], { env: {} })).stdout).toBe("guarded");
  });

  it("a keyed secret's name, an unknown id and a path under /s/ are the same 404 page", async () => {
    expect((await vault.request("POST", "/secrets", { key: "named/secret", value: "keyed" })).status).toBe(201);
    for (const path of ["/s/named/secret", "/s/named%2Fsecret", `/s/${"0".repeat(64)}`, "/s/", "/s"]) {
      const res = await fetch(`${proxy.url}${path}`);
      expect(res.status, path).toBe(404);
      expect(await res.text(), path).toContain("This secret is not available");
    }
    const reveal = await fetch(`${proxy.url}/s/${"0".repeat(64)}/reveal`, { method: "POST" });
    expect(reveal.status).toBe(404);
  });

  it("the create page shows the sender's receipt beside the link, labelled as theirs, with Copy; axe clean", async () => {
    for (const scheme of ["light", "dark"] as const) {
      const context = await browser.newContext({ colorScheme: scheme });
      const page = await context.newPage();
      const violations = await watchCsp(page);
      await page.goto(`${proxy.url}/`);
      await page.getByLabel("Access token").fill(E2E_MASTER_KEY);
      await page.getByLabel("Secret", { exact: true }).fill("receipt on the create page");
      await page.getByRole("button", { name: "Create the link" }).click();
      const receiptField = page.getByLabel("Your receipt (keep it, do not send it)");
      await receiptField.waitFor({ state: "visible" });
      const receipt = await receiptField.inputValue();
      expect(receipt).toMatch(/^vrc_[A-Za-z0-9_-]{54}$/);
      expect(await page.locator("#receipt-help").textContent()).toContain("Keep this receipt: it tells you when the link was opened, and destroys it.");
      expect(await page.getByRole("button", { name: "Copy the receipt" }).isVisible()).toBe(true);
      const link = await page.locator("#link").inputValue();
      secretsUsed.push(link.split("#")[1] ?? "");
      expect(link).not.toContain(receipt);
      expect(await seriousA11yViolations(page), scheme).toEqual([]);
      expect(await violations()).toEqual([]);
      await context.close();
      const status = await fetch(`${proxy.url}/receipts/${receipt}`);
      expect(await status.json()).toMatchObject({ state: "waiting", read_count: 0, max_reads: 1 });
    }
  });

  it("the recipient page offers Destroy it now after a 2-read link's first reveal: then the link is 404 and the receipt says deleted; axe clean", async () => {
    const value = "destroy me after one read";
    const r = await cli(["share", "--addr", proxy.url, "--reads", "2"], { vault, input: value });
    expect(r.code, r.stderr).toBe(0);
    const link = r.stdout.trim();
    secretsUsed.push(value, link.split("#")[1] ?? "");
    const receipt = /^receipt: (vrc_[A-Za-z0-9_-]{54}) /.exec(r.stderr)?.[1] ?? "";
    expect(receipt).not.toBe("");
    const context = await browser.newContext();
    const page = await context.newPage();
    const violations = await watchCsp(page);
    await page.goto(link);
    expect(await page.getByRole("button", { name: "Destroy it now" }).isVisible()).toBe(false);
    expect(await reveal(page)).toBe(value);
    const destroy = page.getByRole("button", { name: "Destroy it now" });
    await destroy.waitFor({ state: "visible" });
    expect(await seriousA11yViolations(page)).toEqual([]);
    await destroy.click();
    await expect.poll(() => page.locator("#after").textContent()).toMatch(/^Destroyed: this link no longer works/);
    expect(await destroy.isVisible()).toBe(false);
    // The value stays on the page, for the reader to copy.
    expect(await page.locator("#value").textContent()).toBe(value);
    expect(await violations()).toEqual([]);
    await context.close();
    expect(await meta(idOf(link))).toBeUndefined();
    expect((await fetch(link.split("#")[0] ?? "")).status).toBe(404);
    expect(await (await fetch(`${proxy.url}/receipts/${receipt}`)).json()).toMatchObject({ state: "deleted", read_count: 1 });
    const audit = (await (await vault.request("GET", `/audit?key=${idOf(link)}`)).json()) as { entries: Array<{ action: string; actor: string | null }> };
    expect(audit.entries.find((e) => e.action === "secret.deleted")?.actor).toBe("share-page");
  });

  it("a one-read link's reveal offers no Destroy it now (nothing is left to destroy)", async () => {
    const link = await share("one read only", ["--reads", "1"]);
    const page = await browser.newPage();
    await page.goto(link);
    expect(await reveal(page)).toBe("one read only");
    await expect.poll(() => page.locator("#after").textContent()).toMatch(/last read/);
    expect(await page.getByRole("button", { name: "Destroy it now" }).isVisible()).toBe(false);
    await page.close();
  });

  it("every page has the strict headers and no serious or critical axe violation, light and dark", async () => {
    const link = await share("a11y value");
    for (const scheme of ["light", "dark"] as const) {
      for (const url of [`${proxy.url}/`, link, `${proxy.url}/s/${"0".repeat(64)}`]) {
        const context = await browser.newContext({ colorScheme: scheme });
        const page = await context.newPage();
        const res = await page.goto(url);
        const headers = res?.headers() ?? {};
        expect(headers["content-security-policy"]).toMatch(/default-src 'none'/);
        expect(headers["content-security-policy"]).toMatch(/frame-ancestors 'none'/);
        expect(headers["referrer-policy"]).toBe("no-referrer");
        expect(headers["cache-control"]).toBe("no-store");
        expect(headers["x-robots-tag"]).toMatch(/noindex/);
        expect(await seriousA11yViolations(page), `${scheme} ${url}`).toEqual([]);
        await context.close();
      }
    }
  });

  it("the link's key and the values never reach the server: not in its requests, logs or database files", async () => {
    const received = proxy.log.join("\n");
    const logs = vault.stdout() + vault.stderr();
    for (const secret of secretsUsed.filter((s) => s.length >= 8)) {
      expect(received.includes(secret), "request log").toBe(false);
      expect(logs.includes(secret), "server log").toBe(false);
    }
    if (TEST_ENGINE === "sqlite") {
      const files = readdirSync(dataDir).filter((f) => f.startsWith("vault.db"));
      const bytes = Buffer.concat(files.map((f) => readFileSync(join(dataDir, f))));
      for (const secret of secretsUsed.filter((s) => s.length >= 8)) {
        expect(bytes.includes(Buffer.from(secret, "utf8")), "database file").toBe(false);
      }
    }
  });
});
