import { mkdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { sealEnvelope } from "@ephemeral-vault/client";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeBrowser, launchBrowser, seriousA11yViolations, watchCsp } from "../../../support/browser.js";
import { cleanupTemp, E2E_MASTER_KEY, killChildren, startVault, tempDir } from "../../../support/e2e-helpers.js";
import type { VaultProcess } from "../../../support/e2e-helpers.js";
import { makeCertificate, startReceiver } from "../../../support/webhook-receiver.js";
import type { Receiver } from "../../../support/webhook-receiver.js";

// The console (/ui) in a real Chromium against the built server, on both engines
// (docs/console.md): sign-in with each kind of token, what each may see, the pages
// that change data, a forged cross-site POST, and axe-core on every page.

describeBrowser("the console in Chromium", () => {
  let browser: Browser;
  let vault: VaultProcess;
  let receiver: Receiver;
  let evil: Server;
  let evilUrl = "";
  let evilTarget = "";

  beforeAll(async () => {
    const cert = await makeCertificate();
    const caFile = join(tempDir("ev-console-ca-"), "ca.pem");
    writeFileSync(caFile, cert.cert);
    receiver = await startReceiver(cert);
    vault = await startVault(tempDir(), { env: { NODE_EXTRA_CA_CERTS: caFile, VAULT_WEBHOOK_ALLOW_PRIVATE: "true" } });
    // Another origin on 127.0.0.1 (same site, other port): a page that posts a form to the vault by itself.
    evil = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end(
        `<form id="f" method="post" action="${evilTarget}"><input name="kind" value="keyed"><input name="key" value="forged/x"><input name="value" value="pwned"></form><script>document.getElementById("f").submit()</script>`,
      );
    });
    await new Promise<void>((resolve) => evil.listen(0, "127.0.0.1", resolve));
    evilUrl = `http://127.0.0.1:${(evil.address() as AddressInfo).port}/`;
    evilTarget = `${vault.url}/ui/secrets/create`;
    browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await new Promise<void>((resolve) => (evil ? evil.close(() => resolve()) : resolve()));
    await killChildren();
    cleanupTemp();
  });

  async function signedIn(
    token: string,
    colorScheme: "light" | "dark" = "light",
    viewport?: { width: number; height: number },
  ): Promise<{ context: BrowserContext; page: Page; csp: () => Promise<string[]> }> {
    const context = await browser.newContext({ colorScheme, ...(viewport === undefined ? {} : { viewport }) });
    const page = await context.newPage();
    const csp = await watchCsp(page);
    await page.goto(`${vault.url}/ui`);
    await page.getByLabel("Token").fill(token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Overview" }).waitFor();
    return { context, page, csp };
  }

  const nav = (page: Page) => page.getByRole("navigation", { name: "Console sections" });

  async function json(res: Promise<Response>, status: number): Promise<Record<string, unknown>> {
    const r = await res;
    const text = await r.text();
    expect(r.status, text).toBe(status);
    return JSON.parse(text) as Record<string, unknown>;
  }

  it("the master key sees every section; each page has no serious or critical axe violation, light and dark, and no CSP violation", async () => {
    for (const scheme of ["light", "dark"] as const) {
      const { context, page, csp } = await signedIn(E2E_MASTER_KEY, scheme);
      const links = await nav(page).getByRole("link").allTextContents();
      expect(links).toEqual(["Overview", "Secrets", "Audit", "Keys", "Organizations", "Webhooks"]);
      for (const name of links) {
        await nav(page).getByRole("link", { name }).click();
        // The new page marks its own link: the scan never runs on the page being left.
        await nav(page).locator('a[aria-current="page"]', { hasText: name }).waitFor();
        await page.waitForLoadState("load");
        expect(await seriousA11yViolations(page), `${name} (${scheme})`).toEqual([]);
      }
      expect(await csp()).toEqual([]);
      await context.close();
    }
    // The pages name their icon: no automatic /favicon.ico answered 401 and counted as a failed authentication.
    expect((await json(vault.request("GET", "/audit?action=auth.failed"), 200)).entries).toEqual([]);
  }, 120_000);

  it("creates, changes, reveals (one read counted) and deletes a secret", async () => {
    const { context, page } = await signedIn(E2E_MASTER_KEY);
    await nav(page).getByRole("link", { name: "Secrets" }).click();
    await page.getByLabel("Key", { exact: true }).fill("console/db");
    await page.getByLabel("Value").fill("s3cret\nline two");
    await page.getByLabel("Max reads (empty: unlimited)").fill("3");
    await page.getByRole("button", { name: "Create", exact: true }).click();
    await expect.poll(() => page.getByRole("status").first().textContent()).toContain("Created console/db.");
    const row = page.getByRole("row", { name: /console\/db/ });
    await expect.poll(() => row.textContent()).toContain("0 / 3");

    await row.locator("summary").click();
    await row.getByLabel("TTL: 90s, 15m, 2h, 7d (empty: none)").fill("10m");
    await row.getByRole("button", { name: "Change" }).click();
    await expect.poll(() => page.getByRole("status").first().textContent()).toContain("Changed console/db.");
    const listed = (await json(vault.request("GET", "/secrets"), 200)).secrets as Array<{ key: string; expires_at: number | null }>;
    expect(listed.find((s) => s.key === "console/db")?.expires_at).not.toBeNull();

    await page.getByRole("row", { name: /console\/db/ }).getByRole("link", { name: /Reveal/ }).click();
    await expect.poll(() => page.getByText(/Revealing counts one read/).count()).toBe(1);
    // Opening the reveal page counts nothing.
    const before = (await json(vault.request("GET", "/secrets"), 200)).secrets as Array<{ key: string; read_count: number }>;
    expect(before.find((s) => s.key === "console/db")?.read_count).toBe(0);
    await page.getByRole("button", { name: "Reveal and count a read" }).click();
    expect(await page.locator("#value").textContent()).toBe("s3cret\nline two");
    const after = (await json(vault.request("GET", "/secrets"), 200)).secrets as Array<{ key: string; read_count: number }>;
    expect(after.find((s) => s.key === "console/db")?.read_count).toBe(1);
    expect(await page.getByText(/That was its last read/).count()).toBe(0);
    expect(await seriousA11yViolations(page)).toEqual([]);

    // A one-read secret: its reveal burns it, and the page says so.
    await json(vault.request("POST", "/secrets", { key: "console/once", value: "only once", max_reads: 1 }), 201);
    await page.goto(`${vault.url}/ui/secrets/reveal?key=console%2Fonce`);
    await page.getByRole("button", { name: "Reveal and count a read" }).click();
    expect(await page.locator("#value").textContent()).toBe("only once");
    expect(await page.getByText(/That was its last read/).count()).toBe(1);
    expect((await vault.request("GET", "/secrets/console%2Fonce")).status).toBe(404);

    await page.getByRole("link", { name: "Back to the list" }).click();
    // Delete asks first, on a page of its own (no script needed); Cancel goes back and deletes nothing.
    await page.getByRole("row", { name: /console\/db/ }).getByRole("link", { name: "Delete console/db" }).click();
    await page.getByRole("heading", { name: "Delete console/db?" }).waitFor();
    expect(await seriousA11yViolations(page)).toEqual([]);
    await page.getByRole("link", { name: /Cancel/ }).click();
    expect((await vault.request("GET", "/secrets")).status).toBe(200);
    expect(((await json(vault.request("GET", "/secrets"), 200)).secrets as Array<{ key: string }>).some((s) => s.key === "console/db")).toBe(true);
    await page.getByRole("row", { name: /console\/db/ }).getByRole("link", { name: "Delete console/db" }).click();
    await page.getByRole("button", { name: "Delete console/db" }).click();
    await expect.poll(() => page.getByRole("status").first().textContent()).toContain("Deleted console/db.");
    expect((await vault.request("GET", "/secrets/console%2Fdb")).status).toBe(404);
    await context.close();
  }, 120_000);

  it("creates a key (token shown once, with Copy) and revokes it: the session signed in with it ends", async () => {
    const { context, page } = await signedIn(E2E_MASTER_KEY);
    await nav(page).getByRole("link", { name: "Keys" }).click();
    await page.getByLabel("Name").fill("ci deploy");
    await page.getByLabel("read").check();
    await page.getByLabel("write").check();
    await page.getByRole("button", { name: "Create a key" }).click();
    const token = await page.locator("#once").inputValue();
    expect(token).toMatch(/\S{20,}/);
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: vault.url });
    await page.getByRole("button", { name: "Copy" }).click();
    await expect.poll(() => page.locator("#status").textContent()).toMatch(/Copied|Copying failed/);
    // Shown once: a reload no longer has it.
    await page.reload();
    expect(await page.locator("#once").count()).toBe(0);
    expect(await page.content()).not.toContain(token);

    // Signed in with the new key: only what read+write may use.
    const other = await signedIn(token);
    expect(await nav(other.page).getByRole("link").allTextContents()).toEqual(["Overview", "Secrets"]);
    await nav(other.page).getByRole("link", { name: "Secrets" }).click();
    expect(await other.page.getByText("This token may not list secrets.").count()).toBe(1);
    expect(await other.page.getByRole("button", { name: "Create", exact: true }).count()).toBe(1);
    const keysPage = await other.page.goto(`${vault.url}/ui/keys`);
    expect(keysPage?.status()).toBe(403);

    await page.getByRole("button", { name: "Revoke ci deploy" }).click();
    await expect.poll(() => page.getByRole("status").first().textContent()).toContain("Revoked");
    await other.page.goto(`${vault.url}/ui/secrets`);
    await other.page.getByRole("heading", { name: "Sign in" }).waitFor();
    expect(await other.page.getByText(/Your session ended/).count()).toBe(1);
    await other.context.close();
    await context.close();
  }, 120_000);

  it("an org with a principal and a key; the principal key signs in to its org's secrets", async () => {
    const { context, page } = await signedIn(E2E_MASTER_KEY);
    await nav(page).getByRole("link", { name: "Organizations" }).click();
    expect(await page.getByText(/No organizations yet/).count()).toBe(1);
    await page.getByLabel("Name").fill("acme");
    await page.getByRole("button", { name: "Create an organization" }).click();
    await page.getByRole("heading", { name: "Organization acme" }).waitFor();
    expect(await page.getByRole("cell", { name: /SecretCreate/ }).count()).toBeGreaterThan(0);
    await page.getByLabel("Name", { exact: true }).fill("ci-bot");
    await page.getByLabel("Role").selectOption("writer");
    await page.getByRole("button", { name: "Add a principal" }).click();
    await expect.poll(() => page.getByRole("status").first().textContent()).toContain("Added principal ci-bot.");
    await page.getByLabel("Name (ci-bot)").fill("laptop");
    await page.getByRole("button", { name: "New key" }).click();
    const token = await page.locator("#once").inputValue();
    expect(token).toMatch(/^vpk_/);
    // A refusal is shown as the API's message: an org with principals cannot be deleted.
    await page.getByRole("button", { name: "Delete the organization" }).click();
    await expect.poll(() => page.getByRole("alert").first().textContent()).toContain("The vault answered");

    const p = await signedIn(token);
    expect(await nav(p.page).getByRole("link").allTextContents()).toEqual(["Overview", "Secrets"]);
    await nav(p.page).getByRole("link", { name: "Secrets" }).click();
    await p.page.getByRole("heading", { name: /Secrets of organization/ }).waitFor();
    await p.page.getByLabel("Key", { exact: true }).fill("org/one");
    await p.page.getByLabel("Value").fill("org value");
    await p.page.getByRole("button", { name: "Create", exact: true }).click();
    await expect.poll(() => p.page.getByRole("row", { name: /org\/one/ }).count()).toBe(1);
    expect(await seriousA11yViolations(p.page)).toEqual([]);
    const orgsPage = await p.page.goto(`${vault.url}/ui/orgs`);
    expect(orgsPage?.status()).toBe(403);
    await p.context.close();
    await context.close();
  }, 120_000);

  it("a webhook: the signing secret shown once, a test event delivered to a local receiver and listed", async () => {
    const { context, page } = await signedIn(E2E_MASTER_KEY);
    await nav(page).getByRole("link", { name: "Webhooks" }).click();
    await page.getByLabel("URL").fill(receiver.url);
    await page.getByLabel("Events (comma-separated, empty: all)").fill("secret.created");
    await page.getByRole("button", { name: "Register a webhook" }).click();
    expect(await page.locator("#once").inputValue()).not.toBe("");
    await page.getByRole("button", { name: `Send a test event: ${receiver.url}` }).click();
    await expect.poll(() => page.getByRole("status").first().textContent()).toContain("A test event was queued.");
    const [test] = await receiver.waitFor(1, 20_000);
    expect(JSON.parse(test?.body ?? "{}").type).toBe("webhook.test");
    await expect
      .poll(async () => {
        await page.reload();
        return page.locator("section.card").first().textContent();
      }, { timeout: 20_000 })
      .toMatch(/webhook\.test\s*delivered/);
    expect(await seriousA11yViolations(page)).toEqual([]);
    await context.close();
  }, 120_000);

  it("the audit page filters by action, exports NDJSON and reports the hash chain", async () => {
    const { context, page } = await signedIn(E2E_MASTER_KEY);
    await nav(page).getByRole("link", { name: "Audit" }).click();
    await expect.poll(() => page.locator("#chain").textContent()).toMatch(/intact through entry \d+/);
    await page.getByLabel("Action").fill("secret.created");
    await page.getByRole("button", { name: "Filter" }).click();
    const actions = await page.locator("tbody tr td:nth-child(2)").allTextContents();
    expect(actions.length).toBeGreaterThan(0);
    expect(new Set(actions)).toEqual(new Set(["secret.created"]));
    const href = await page.getByRole("link", { name: "Export as NDJSON" }).getAttribute("href");
    const exported = await page.request.get(new URL(href ?? "", page.url()).toString());
    expect(exported.status()).toBe(200);
    expect(exported.headers()["content-type"]).toMatch(/application\/x-ndjson/);
    const lines = (await exported.text()).trim().split("\n").map((l) => JSON.parse(l) as { action: string });
    expect(lines.length).toBe(actions.length);
    expect(lines.every((l) => l.action === "secret.created")).toBe(true);
    await context.close();
  }, 120_000);

  it("a forged cross-site POST from another origin is refused and changes nothing", async () => {
    const { context, page } = await signedIn(E2E_MASTER_KEY);
    const answer = page.waitForResponse((r) => r.url() === evilTarget);
    await page.goto(evilUrl);
    expect((await answer).status()).toBe(403);
    expect((await vault.request("GET", "/secrets/forged%2Fx")).status).toBe(404);
    await context.close();
  }, 120_000);

  it("share links: marked, no Reveal, what the holder can do, Delete; a secret's page with its history; light, dark and 390 px, axe clean", async () => {
    const shots = "/tmp/shots-console";
    mkdirSync(shots, { recursive: true });
    const share = await json(vault.request("POST", "/secrets", { value: "a shared envelope", max_reads: 1, ttl_seconds: 86_400 }), 201);
    const id = String(share.id);
    const sealed = await sealEnvelope("an end-to-end value", {});
    const e2e = String((await json(vault.request("POST", "/secrets", { value: sealed.envelope, reveal_check: sealed.revealCheck, max_reads: 1 }), 201)).id);
    await json(vault.request("POST", "/secrets", { key: "console/page/db", value: "v", max_reads: 2 }), 201);
    await json(vault.request("GET", "/secrets/console%2Fpage%2Fdb"), 200);
    await json(vault.request("POST", "/webhooks", { url: receiver.url, events: ["*"], description: "a receiver with a rather long address" }), 201);
    for (const [scheme, viewport, tag] of [["light", undefined, "light"], ["dark", undefined, "dark"], ["light", { width: 390, height: 844 }, "390"]] as const) {
      const { context, page } = await signedIn(E2E_MASTER_KEY, scheme, viewport);
      await nav(page).getByRole("link", { name: "Secrets" }).click();
      const row = page.getByRole("row", { name: new RegExp(id) });
      await row.waitFor();
      expect(await row.getByRole("link", { name: /Reveal/ }).count()).toBe(0);
      expect(await row.textContent()).toContain("public");
      expect(await row.textContent()).toContain("can open it 1 more time");
      expect(await row.getByRole("link", { name: `Delete ${id}` }).count()).toBe(1);
      const e2eRow = page.getByRole("row", { name: new RegExp(e2e) });
      expect(await e2eRow.textContent()).toContain("end-to-end link");
      expect(await e2eRow.getByRole("link", { name: /Reveal/ }).count()).toBe(0);
      expect(await row.textContent()).not.toContain("end-to-end");
      expect(await seriousA11yViolations(page), `secrets ${tag}`).toEqual([]);
      await page.screenshot({ path: join(shots, `secrets-${tag}.png`), fullPage: true });

      await page.getByRole("row", { name: /console\/page\/db/ }).getByRole("link", { name: /Details/ }).click();
      await page.getByRole("heading", { name: "Secret console/page/db" }).waitFor();
      expect(await page.locator("dl.facts").textContent()).toContain("destroys it (its last read)");
      expect(await page.getByRole("cell", { name: "secret.read" }).count()).toBe(1);
      expect(await seriousA11yViolations(page), `secret page ${tag}`).toEqual([]);
      await page.screenshot({ path: join(shots, `secret-page-${tag}.png`), fullPage: true });

      await page.goto(`${vault.url}/ui/audit?since=yesterday`);
      expect(await page.getByRole("alert").first().textContent()).toContain('"yesterday" is not a time');
      expect(await seriousA11yViolations(page), `audit ${tag}`).toEqual([]);
      await page.screenshot({ path: join(shots, `audit-bad-filter-${tag}.png`), fullPage: true });

      // No page scrolls sideways, on a phone included; every page is in standards mode.
      for (const name of ["overview", "secrets", "audit", "keys", "orgs", "webhooks", `secrets/delete?key=${id}`, "secrets/view?key=console%2Fpage%2Fdb"]) {
        await page.goto(`${vault.url}/ui/${name}`);
        const m = await page.evaluate(() => ({ doc: document.documentElement.scrollWidth, view: window.innerWidth, mode: document.compatMode }));
        expect(m.mode, name).toBe("CSS1Compat");
        expect(m.doc, `${name} at ${tag}`).toBeLessThanOrEqual(m.view);
        if (name === "webhooks" || name.startsWith("secrets/delete")) await page.screenshot({ path: join(shots, `${name.split("?")[0]?.replace("/", "-")}-${tag}.png`), fullPage: true });
      }
      await context.close();
    }
    // Nothing here spent the share link's read.
    const listed = (await json(vault.request("GET", "/secrets"), 200)).secrets as Array<{ id?: string; read_count: number }>;
    expect(listed.find((s) => s.id === id)?.read_count).toBe(0);
    expect(listed.find((s) => s.id === e2e)?.read_count).toBe(0);
  }, 180_000);

  it("on a phone (390 px) the secrets table needs no sideways scroll: each row a card of labelled lines, still a table row", async () => {
    expect((await vault.request("POST", "/secrets", { key: "console/phone/a-rather-long-key-name", value: "v" })).status).toBe(201);
    const { context, page } = await signedIn(E2E_MASTER_KEY, "light", { width: 390, height: 844 });
    await nav(page).getByRole("link", { name: "Secrets" }).click();
    const row = page.getByRole("row", { name: /console\/phone\/a-rather-long-key-name/ });
    await row.waitFor();
    const widths = await page.evaluate(() => {
      const wrap = document.querySelector(".table-wrap");
      return { doc: document.documentElement.scrollWidth, view: window.innerWidth, wrap: wrap?.scrollWidth ?? 0, wrapClient: wrap?.clientWidth ?? 0 };
    });
    expect(widths.doc).toBeLessThanOrEqual(widths.view);
    expect(widths.wrap).toBeLessThanOrEqual(widths.wrapClient);
    // The key reads as one line of text, not a letter per line.
    const key = row.getByRole("rowheader");
    const fontSize = await key.evaluate((el) => Number.parseFloat(getComputedStyle(el).fontSize));
    const box = await key.boundingBox();
    expect(fontSize).toBeGreaterThan(0);
    expect(box?.height ?? Infinity).toBeLessThan(fontSize * 6);
    expect(await seriousA11yViolations(page)).toEqual([]);
    await page.screenshot({ path: join(tempDir("ev-console-phone-"), "secrets-390.png"), fullPage: true });
    await context.close();
  }, 120_000);
});
