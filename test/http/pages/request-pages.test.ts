import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { generateRequestKeys, openAnswer, requestRevealProof } from "../../../packages/client/src/request-envelope.js";
import type { RequestKeys } from "../../../packages/client/src/request-envelope.js";
import { describeBrowser, launchBrowser, seriousA11yViolations, startRecordingProxy, watchCsp } from "../../support/browser.js";
import type { RecordingProxy } from "../../support/browser.js";
import { cleanupTemp, E2E_MASTER_KEY, killChildren, startVault, tempDir } from "../../support/e2e-helpers.js";
import type { VaultProcess } from "../../support/e2e-helpers.js";

// The request pages in a real Chromium (docs/requests.md, "The answer page and the private
// link"): the answer page /r/<id> encrypts in the browser and reads nothing on load, the private
// link /r/<id>/open#<key> reads the answer only on a click, and "Ask for a secret" on the create
// page makes the key pair in the browser.

/** The vault's value limit here, bytes: small, so the page's own refusal of a too long answer is cheap to reach. */
const MAX_VALUE_BYTES = 4096;

describeBrowser("the request pages in Chromium", () => {
  let browser: Browser;
  let vault: VaultProcess;
  let proxy: RecordingProxy;
  /** Every private key and answer used here: none may reach the server in a request's URL or headers. */
  const secretsUsed: string[] = [];

  beforeAll(async () => {
    proxy = await startRecordingProxy();
    vault = await startVault(tempDir(), { env: { VAULT_PUBLIC_URL: proxy.url, VAULT_MAX_VALUE_BYTES: String(MAX_VALUE_BYTES) } });
    proxy.target(vault.url);
    browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await proxy?.close();
    await killChildren();
    cleanupTemp();
  });

  /** Makes a request through the API with keys made here, in Node: its JSON and the keys. */
  async function ask(description: string, extra: Record<string, unknown> = {}): Promise<{ id: string; url: string; keys: RequestKeys }> {
    const keys = await generateRequestKeys();
    secretsUsed.push(keys.privateKey);
    const { revealCheck } = await requestRevealProof(keys.privateKey);
    const res = await vault.request("POST", "/requests", { description, public_key: keys.publicKey, reveal_check: revealCheck, ...extra });
    expect(res.status).toBe(201);
    const body = (await res.json()) as { id: string; url: string };
    expect(body.url).toBe(`${proxy.url}/r/${body.id}`);
    return { id: body.id, url: body.url, keys };
  }

  async function stateOf(id: string): Promise<string | undefined> {
    const res = await vault.request("GET", `/requests/${id}`);
    return res.status === 200 ? ((await res.json()) as { state: string }).state : undefined;
  }

  /** Types `value` into the answer page and sends it. */
  async function answerIn(page: Page, value: string): Promise<void> {
    await page.getByLabel("Your answer").fill(value);
    await page.getByRole("button", { name: "Send the answer" }).click();
  }

  /** Reads the answer as the asker, in Node: POST /r/<id>/reveal with the proof, then openAnswer. */
  async function readAnswer(id: string, keys: RequestKeys): Promise<{ value: string; status: number }> {
    const { proof } = await requestRevealProof(keys.privateKey);
    const res = await fetch(`${proxy.url}/r/${id}/reveal`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ proof }) });
    if (res.status !== 200) return { value: "", status: res.status };
    const body = (await res.json()) as { value: string };
    return { value: await openAnswer(keys.privateKey, id, body.value), status: 200 };
  }

  it("a request made through the API, answered in the browser, reads back byte-exact in Node; loading the page reads nothing", async () => {
    const req = await ask("The staging database password, please.\nThe one from the wiki.");
    // A link preview, twice: the page is there, names no secret, and the request stays open.
    for (let i = 0; i < 2; i++) {
      const res = await fetch(req.url);
      expect(res.status).toBe(200);
      expect(res.headers.get("cache-control")).toBe("no-store");
      expect(res.headers.get("referrer-policy")).toBe("no-referrer");
      const html = await res.text();
      expect(html.startsWith("<!DOCTYPE html>")).toBe(true);
      expect(html).not.toMatch(/og:|twitter:/);
      expect(html).toContain(`data-public-key="${req.keys.publicKey}"`);
    }
    expect(await stateOf(req.id)).toBe("open");
    const page = await browser.newPage();
    const violations = await watchCsp(page);
    await page.goto(req.url);
    expect(await page.locator("#description").textContent()).toBe("The staging database password, please.\nThe one from the wiki.");
    expect(await page.locator("#asker").textContent()).toBe("the vault's administrator");
    // A text area gives LF for a typed line break: the value is sent as the browser gives it.
    const value = "line one 🔑\nline two — ünïcödé 日本語\n\ttabbed\n\n";
    secretsUsed.push(value);
    await answerIn(page, value);
    await expect.poll(() => page.locator("#sent").isVisible(), { timeout: 15_000 }).toBe(true);
    expect(await page.locator("#sent").textContent()).toBe("Sent. Only the person who asked can open it.");
    expect(await page.locator("#answer-form").isVisible()).toBe(false);
    expect(await violations()).toEqual([]);
    await page.close();
    expect(await stateOf(req.id)).toBe("answered");
    expect(await readAnswer(req.id, req.keys)).toEqual({ value, status: 200 });
    // One read by default: the answer is burned.
    expect((await readAnswer(req.id, req.keys)).status).toBe(404);
  });

  it("a request made on the create page is answered in a second page and opened by its private link", async () => {
    const context = await browser.newContext();
    const asker = await context.newPage();
    const askerCsp = await watchCsp(asker);
    await asker.goto(`${proxy.url}/`);
    await asker.getByLabel("Access token").fill(E2E_MASTER_KEY);
    await asker.getByLabel("What you ask for").fill("The Wi-Fi password of the office");
    // The default expiry is 7 days.
    expect(await asker.getByLabel("Open for").inputValue()).toBe("604800");
    await asker.getByRole("button", { name: "Create request" }).click();
    const urlField = asker.getByLabel("Send this link to the person who has the secret");
    await urlField.waitFor({ state: "visible", timeout: 15_000 });
    const url = await urlField.inputValue();
    const privateLink = await asker.getByLabel("Keep this private link: it opens the answer").inputValue();
    expect(url).toMatch(new RegExp(`^${proxy.url}/r/[0-9a-f]{64}$`));
    expect(privateLink).toMatch(new RegExp(`^${url}/open#[A-Za-z0-9_-]{128}$`));
    secretsUsed.push(privateLink.split("#")[1] ?? "");
    expect(await seriousA11yViolations(asker), "create page, request made").toEqual([]);
    expect(await askerCsp()).toEqual([]);
    const id = /\/r\/([0-9a-f]{64})/.exec(url)?.[1] ?? "";
    const made = (await (await vault.request("GET", `/requests/${id}`)).json()) as { description: string; ttl_seconds: number; state: string };
    expect(made).toMatchObject({ description: "The Wi-Fi password of the office", ttl_seconds: 604_800, state: "open" });

    // The asker opens the private link before anyone answered: not answered yet, nothing counted.
    const opener = await context.newPage();
    const openerCsp = await watchCsp(opener);
    await opener.goto(privateLink);
    await opener.getByRole("button", { name: "Open the answer" }).click();
    await expect.poll(() => opener.locator("#error").textContent(), { timeout: 15_000 }).toMatch(/^Not answered yet\./);
    const checkAgain = opener.getByRole("button", { name: "Check again" });
    expect(await checkAgain.isVisible()).toBe(true);
    expect(await opener.evaluate(() => document.activeElement?.id)).toBe("check-again");

    // The person asked answers in another browser.
    const other = await browser.newContext();
    const answerer = await other.newPage();
    await answerer.goto(url);
    const value = "office-wifi: correct horse 🐎\r\nnot this line";
    await answerIn(answerer, value);
    await expect.poll(() => answerer.locator("#sent").isVisible(), { timeout: 15_000 }).toBe(true);
    await other.close();

    await checkAgain.click();
    await opener.locator("#value").waitFor({ state: "visible", timeout: 15_000 });
    // The text area gave the page LF for the CR LF typed: what was sent is what the browser gave.
    expect(await opener.locator("#value").textContent()).toBe("office-wifi: correct horse 🐎\nnot this line");
    expect(await opener.locator("#after").textContent()).toMatch(/last read/);
    expect(opener.url()).toBe(`${url}/open`);
    expect(await seriousA11yViolations(opener), "open page, answer read").toEqual([]);
    expect(await openerCsp()).toEqual([]);
    await context.close();
  });

  it("a second answer is refused in the page (409), and the answered request is then the 404 page", async () => {
    const req = await ask("Only one answer");
    const context = await browser.newContext();
    const first = await context.newPage();
    const second = await context.newPage();
    await first.goto(req.url);
    await second.goto(req.url);
    await answerIn(first, "the first answer");
    await expect.poll(() => first.locator("#sent").isVisible(), { timeout: 15_000 }).toBe(true);
    await answerIn(second, "the second answer");
    await expect.poll(() => second.locator("#error").textContent(), { timeout: 15_000 }).toBe("Someone already answered this request. Your answer was not stored.");
    expect(await second.locator("#answer-form").isVisible()).toBe(false);
    expect(await seriousA11yViolations(second), "answer page, 409").toEqual([]);
    const again = await second.goto(req.url);
    expect(again?.status()).toBe(404);
    expect(await second.locator("h1").textContent()).toBe("This request is not available");
    await context.close();
    expect(await readAnswer(req.id, req.keys)).toEqual({ value: "the first answer", status: 200 });
  });

  it("an answer over the value limit is refused in the page before sending; the request stays open", async () => {
    const req = await ask("Something long");
    const page = await browser.newPage();
    await page.goto(req.url);
    await answerIn(page, "é".repeat(MAX_VALUE_BYTES / 2 + 1));
    await expect.poll(() => page.locator("#error").textContent(), { timeout: 15_000 }).toBe(`Your answer is too long: at most ${MAX_VALUE_BYTES} bytes, and it has ${MAX_VALUE_BYTES + 2}. Nothing was sent.`);
    expect(await page.locator("#answer-form").isVisible()).toBe(true);
    await page.close();
    expect(await stateOf(req.id)).toBe("open");
  });

  it("the private link: a damaged key sends nothing; another request's key does not match (403); a burned answer is gone (404)", async () => {
    const req = await ask("For the private link");
    const stranger = await generateRequestKeys();
    const cases: Array<{ url: string; text: RegExp; button: boolean }> = [
      { url: `${req.url}/open`, text: /^This link is incomplete or damaged/, button: false },
      { url: `${req.url}/open#${req.keys.privateKey.slice(0, -3)}`, text: /^This link is incomplete or damaged/, button: false },
      { url: `${req.url}/open#${stranger.privateKey}`, text: /^This link does not match the request/, button: true },
    ];
    for (const c of cases) {
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(c.url);
      if (c.button) await page.getByRole("button", { name: "Open the answer" }).click();
      await expect.poll(() => page.locator("#error").textContent(), { timeout: 15_000 }).toMatch(c.text);
      expect(await page.locator("#open").isVisible()).toBe(false);
      expect(await seriousA11yViolations(page), c.url).toEqual([]);
      await context.close();
    }
    const page = await browser.newPage();
    await page.goto(req.url);
    await answerIn(page, "read once");
    await expect.poll(() => page.locator("#sent").isVisible(), { timeout: 15_000 }).toBe(true);
    expect(await readAnswer(req.id, req.keys)).toEqual({ value: "read once", status: 200 });
    await page.goto(`${req.url}/open#${req.keys.privateKey}`);
    await page.getByRole("button", { name: "Open the answer" }).click();
    await expect.poll(() => page.locator("#error").textContent(), { timeout: 15_000 }).toMatch(/^The request or its answer is gone/);
    await page.close();
  });

  it("an unknown, malformed or answered request, and any other path under /r/, are the same 404 page", async () => {
    const req = await ask("Answered at once");
    const page = await browser.newPage();
    await page.goto(req.url);
    await answerIn(page, "done");
    await expect.poll(() => page.locator("#sent").isVisible(), { timeout: 15_000 }).toBe(true);
    await page.close();
    const pages: string[] = [];
    for (const path of [`/r/${req.id}`, `/r/${"0".repeat(64)}`, `/r/${"A".repeat(64)}`, "/r/short", "/r/", "/r", `/r/${req.id}/other`, `/r/short/open`]) {
      const res = await fetch(`${proxy.url}${path}`);
      expect(res.status, path).toBe(404);
      expect(res.headers.get("cache-control"), path).toBe("no-store");
      const html = await res.text();
      expect(html, path).toContain("This request is not available");
      pages.push(html.replace(/\.\.\//g, ""));
    }
    // One page for every miss: nothing tells an answered request from one that never was.
    expect(new Set(pages).size).toBe(1);
  });

  it("works by keyboard alone: Ask for a secret, the answer page and the private link", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${proxy.url}/`);
    await page.getByLabel("Access token").fill(E2E_MASTER_KEY);
    await page.getByLabel("What you ask for").focus();
    await page.keyboard.type("asked by keyboard");
    // Tab: the expiry, then Create request.
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("ask-ttl");
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("ask-submit");
    await page.keyboard.press("Enter");
    await page.locator("#ask-result").waitFor({ state: "visible", timeout: 15_000 });
    // The link to send has the focus, selected for a copy.
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("ask-url");
    const url = await page.locator("#ask-url").inputValue();
    const privateLink = await page.locator("#ask-private").inputValue();
    secretsUsed.push(privateLink.split("#")[1] ?? "");
    await page.goto(url);
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("answer");
    await page.keyboard.type("typed by keyboard");
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("send");
    await page.keyboard.press("Enter");
    await expect.poll(() => page.locator("#sent").isVisible(), { timeout: 15_000 }).toBe(true);
    await page.goto(privateLink);
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("open");
    await page.keyboard.press("Enter");
    await page.locator("#value").waitFor({ state: "visible", timeout: 15_000 });
    expect(await page.locator("#value").textContent()).toBe("typed by keyboard");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("value");
    await context.close();
  });

  it("every request page has the strict headers and no serious or critical axe violation, light, dark and 390 px wide", async () => {
    const req = await ask("A request for the accessibility scan");
    const views: Array<{ colorScheme: "light" | "dark"; viewport?: { width: number; height: number } }> = [
      { colorScheme: "light" },
      { colorScheme: "dark" },
      { colorScheme: "light", viewport: { width: 390, height: 844 } },
    ];
    for (const view of views) {
      for (const url of [req.url, `${req.url}/open#${req.keys.privateKey}`, `${proxy.url}/`, `${proxy.url}/r/${"0".repeat(64)}`]) {
        const context: BrowserContext = await browser.newContext(view);
        const page = await context.newPage();
        const csp = await watchCsp(page);
        const res = await page.goto(url);
        const headers = res?.headers() ?? {};
        expect(headers["content-security-policy"]).toMatch(/default-src 'none'/);
        expect(headers["referrer-policy"]).toBe("no-referrer");
        expect(headers["cache-control"]).toBe("no-store");
        expect(headers["x-robots-tag"]).toMatch(/noindex/);
        const label = `${view.colorScheme} ${view.viewport?.width ?? 1280} ${url}`;
        expect(await seriousA11yViolations(page), label).toEqual([]);
        // Nothing wider than the window (390 px: a phone).
        expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), label).toBe(true);
        expect(await csp(), label).toEqual([]);
        await context.close();
      }
    }
    expect(await stateOf(req.id)).toBe("open");
  });

  it("the private keys and the answers never reach the server in a request's address or headers", () => {
    const received = proxy.log.join("\n");
    for (const secret of secretsUsed.filter((s) => s.length >= 8)) expect(received.includes(secret)).toBe(false);
  });
});
