import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeBrowser, launchBrowser, seriousA11yViolations, watchCsp } from "../../support/browser.js";
import { cleanupTemp, killChildren, startVault, tempDir } from "../../support/e2e-helpers.js";
import type { VaultProcess } from "../../support/e2e-helpers.js";
import { CookieFetch, loginAtIdp, startTestIdp } from "../../support/oidc-provider.js";
import type { TestIdp } from "../../support/oidc-provider.js";

// Single sign-on in a real Chromium against the built server, on both engines
// (docs/sso.md), with oidc-provider on loopback as the identity provider: a
// first sign-in makes the principal with the mapped role and the console shows
// only what that role may do; a person without a mapped group is refused; a
// replayed callback is refused; a role changed at the provider applies at the
// next sign-in. axe on the sign-in pages; screenshots under /tmp/oidc-shots.

const SHOTS = process.env.VAULT_SHOTS_DIR ?? "/tmp/oidc-shots";

describeBrowser("single sign-on in Chromium", () => {
  let browser: Browser;
  let vault: VaultProcess;
  let idp: TestIdp & { setRedirectUris(uris: string[]): void };
  let orgId = "";

  beforeAll(async () => {
    idp = await startTestIdp({
      rita: { email: "rita@example.com", name: "Rita", groups: ["readers"] },
      ada: { email: "ada@example.com", name: "Ada", groups: ["vault-admins"] },
      sam: { email: "sam@example.com", name: "Sam", groups: ["sales"] },
    });
    const dataDir = tempDir();
    // The org people land in exists before the vault is told about it.
    const first = await startVault(dataDir);
    const org = await first.request("POST", "/orgs", { name: "people" });
    expect(org.status).toBe(201);
    orgId = ((await org.json()) as { id: string }).id;
    await first.stop();
    vault = await startVault(dataDir, {
      env: {
        VAULT_OIDC_ISSUER: idp.issuer,
        VAULT_OIDC_CLIENT_ID: idp.clientId,
        VAULT_OIDC_CLIENT_SECRET: idp.clientSecret,
        VAULT_OIDC_ORG: orgId,
        VAULT_OIDC_ROLE_MAP: "vault-admins=admin, devs=writer, readers=reader",
        VAULT_OIDC_KEY_TTL: "2h",
      },
    });
    idp.setRedirectUris([`${vault.url}/ui/oidc/callback`]);
    browser = await launchBrowser();
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await idp?.close();
    await killChildren();
    cleanupTemp();
  });

  const nav = (page: Page) => page.getByRole("navigation", { name: "Console sections" });
  const provider = () => `Sign in with ${new URL(idp.issuer).host}`;

  /** Signs `login` in from the console's sign-in page; the page ends where the vault answered the callback. */
  async function signIn(login: string, shot?: string): Promise<{ page: Page; callbacks: string[]; csp: () => Promise<string[]>; close: () => Promise<void> }> {
    const context = await browser.newContext();
    const page = await context.newPage();
    const csp = await watchCsp(page);
    const callbacks: string[] = [];
    page.on("request", (req) => {
      if (req.url().includes("/ui/oidc/callback")) callbacks.push(req.url());
    });
    await page.goto(`${vault.url}/ui`);
    if (shot !== undefined) await page.screenshot({ path: `${SHOTS}/${shot}-signin.png`, fullPage: true });
    await page.getByRole("link", { name: provider() }).click();
    await page.getByLabel("Username").fill(login);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(/\/ui\/(oidc\/callback|overview)/);
    return { page, callbacks, csp, close: () => context.close() };
  }

  it("the sign-in page offers the provider, keyboard first, with no serious axe violation", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const csp = await watchCsp(page);
    await page.goto(`${vault.url}/ui/login`);
    expect(await seriousA11yViolations(page)).toEqual([]);
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe(provider());
    await page.screenshot({ path: `${SHOTS}/signin.png`, fullPage: true });
    expect(await csp()).toEqual([]);
    await context.close();
  });

  it("a first sign-in makes the principal with the mapped role; a reader sees no create form and no admin section", async () => {
    const { page, csp, close } = await signIn("rita", "rita");
    await page.getByRole("heading", { name: "Overview" }).waitFor();
    expect(await nav(page).getByRole("link").allTextContents()).toEqual(["Overview", "Secrets"]);
    await nav(page).getByRole("link", { name: "Secrets" }).click();
    await page.getByRole("heading", { name: /Secrets of organization/ }).waitFor();
    expect(await page.getByRole("button", { name: "Create", exact: true }).count()).toBe(0);
    expect(await page.getByText("Your role may read secrets, not create them.").count()).toBe(1);
    await page.screenshot({ path: `${SHOTS}/rita-reader-secrets.png`, fullPage: true });
    expect((await page.goto(`${vault.url}/ui/orgs`))?.status()).toBe(403);
    expect(await csp()).toEqual([]);
    const principals = (await (await vault.request("GET", `/orgs/${orgId}/principals`)).json()) as { principals: Array<{ name: string; role: string }> };
    expect(principals.principals.map((p) => [p.name, p.role])).toEqual([["rita@example.com", "reader"]]);
    await close();
  }, 60_000);

  it("an admin of the provider's groups sees the org's audit and webhooks", async () => {
    const { page, close } = await signIn("ada");
    await page.getByRole("heading", { name: "Overview" }).waitFor();
    expect(await nav(page).getByRole("link").allTextContents()).toEqual(["Overview", "Secrets", "Audit", "Webhooks"]);
    await nav(page).getByRole("link", { name: "Audit" }).click();
    await expect.poll(() => page.getByRole("row", { name: /principal\.created/ }).count()).toBeGreaterThan(0);
    await close();
  }, 60_000);

  it("a person without a mapped group is refused with a page that says why", async () => {
    const { page, csp, close } = await signIn("sam");
    await page.getByRole("heading", { name: "Sign-in refused" }).waitFor();
    expect(await page.getByRole("alert").textContent()).toContain("none of the groups");
    expect(await seriousA11yViolations(page)).toEqual([]);
    await page.screenshot({ path: `${SHOTS}/sam-refused.png`, fullPage: true });
    expect(await csp()).toEqual([]);
    expect((await page.goto(`${vault.url}/ui/overview`))?.url()).toMatch(/\/ui\/login$/);
    await close();
  }, 60_000);

  it("the signed-in page has no serious axe violation (its markup, the refresh held back for the scan)", async () => {
    // A sign-in by HTTP gives the page the vault answers; Chromium then shows it without its refresh.
    const jar = new CookieFetch();
    const started = await jar.go(`${vault.url}/ui/oidc/login`, {}, (next) => next.startsWith(vault.url));
    const callback = await loginAtIdp(jar, idp, started.url, "ada");
    const html = await (await jar.go(callback)).res.text();
    expect(html).toMatch(/<meta http-equiv="refresh" content="0;url=..\/overview"\/>/);
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.route(`${vault.url}/ui/oidc/callback`, (route) =>
      route.fulfill({ status: 200, contentType: "text/html", body: html.replace(/<meta http-equiv="refresh"[^>]*>/, "") }),
    );
    await page.goto(`${vault.url}/ui/oidc/callback`);
    await page.getByRole("heading", { name: "Signed in" }).waitFor();
    expect(await page.getByRole("status").textContent()).toContain("ada@example.com (role admin)");
    expect(await seriousA11yViolations(page)).toEqual([]);
    await page.screenshot({ path: `${SHOTS}/ada-signed-in.png`, fullPage: true });
    await context.close();
  }, 60_000);

  it("a replayed callback is refused", async () => {
    const { page, callbacks, close } = await signIn("rita");
    await page.getByRole("heading", { name: /Signed in|Overview/ }).first().waitFor();
    await page.getByRole("heading", { name: "Overview" }).waitFor();
    expect(callbacks).toHaveLength(1);
    await page.goto(callbacks[0] as string);
    await page.getByRole("heading", { name: "Sign-in refused" }).waitFor();
    expect(await page.locator("[data-refused]").getAttribute("data-refused")).toBe("state");
    expect(await seriousA11yViolations(page)).toEqual([]);
    await page.screenshot({ path: `${SHOTS}/replay-refused.png`, fullPage: true });
    await close();
  }, 60_000);

  it("a role changed at the provider applies at the next sign-in", async () => {
    idp.setGroups("rita", ["devs"]);
    const { page, close } = await signIn("rita");
    await page.getByRole("heading", { name: "Overview" }).waitFor();
    await nav(page).getByRole("link", { name: "Secrets" }).click();
    await page.getByLabel("Key", { exact: true }).fill("team/db");
    await page.getByLabel("Value").fill("s3cret");
    await page.getByRole("button", { name: "Create", exact: true }).click();
    await expect.poll(() => page.getByRole("row", { name: /team\/db/ }).count()).toBe(1);
    await page.screenshot({ path: `${SHOTS}/rita-writer-secrets.png`, fullPage: true });
    const principals = (await (await vault.request("GET", `/orgs/${orgId}/principals`)).json()) as { principals: Array<{ name: string; role: string }> };
    expect(principals.principals.find((p) => p.name === "rita@example.com")?.role).toBe("writer");
    await close();
  }, 60_000);
});
