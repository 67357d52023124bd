#!/usr/bin/env node
// Screenshots of the share pages for docs/share.md (and the request pages for docs/requests.md): light, dark and phone width, in Debian's
// Chromium (playwright-core, nothing downloaded). Needs `npm run build` first.
//   node scripts/screenshots.mjs [OUT_DIR]   (default docs/images)
import { spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";

const root = new URL("..", import.meta.url).pathname;
const out = process.argv[2] ?? join(root, "docs", "images");
mkdirSync(out, { recursive: true });
const master = "screenshot-master-key-0123456789";
const child = spawn(process.execPath, [join(root, "bin", "ephemeral-vault.js"), "--port", "0", "--data-dir", ":memory:"], {
  env: { ...process.env, VAULT_MASTER_KEY: master, VAULT_LOG_LEVEL: "warn" },
  stdio: ["ignore", "ignore", "pipe"],
});
const url = await new Promise((resolve, reject) => {
  let err = "";
  child.stderr.setEncoding("utf8").on("data", (s) => {
    err += s;
    const m = /listening on (http:\/\/\S+)/.exec(err);
    if (m) resolve(m[1]);
  });
  child.once("exit", (code) => reject(new Error(`the vault exited (${code}): ${err}`)));
});
const { VaultClient } = await import(join(root, "packages", "client", "dist", "index.js"));
const client = new VaultClient({ addr: url, token: master, org: null });
const browser = await chromium.launch({ executablePath: process.env.VAULT_CHROMIUM ?? "/usr/bin/chromium", args: ["--no-sandbox"] });
const views = [
  { name: "light", colorScheme: "light", viewport: { width: 1000, height: 760 } },
  { name: "dark", colorScheme: "dark", viewport: { width: 1000, height: 760 } },
  { name: "phone", colorScheme: "light", viewport: { width: 390, height: 844 } },
];
try {
  for (const view of views) {
    const context = await browser.newContext({ colorScheme: view.colorScheme, viewport: view.viewport });
    const page = await context.newPage();
    const shot = (what) => page.screenshot({ path: join(out, `share-${what}-${view.name}.png`), fullPage: true });
    await page.goto(`${url}/`);
    await page.getByLabel("Access token").fill(master);
    await page.getByLabel("Secret", { exact: true }).fill("wifi: hunter2\nguest network: vault-guest");
    await shot("create");
    await page.getByRole("button", { name: "Create the link" }).click();
    await page.locator("#link").waitFor({ state: "visible" });
    await shot("created");
    const link = await page.locator("#link").inputValue();
    await page.goto(link);
    await shot("recipient");
    await page.getByRole("button", { name: "Reveal the secret" }).click();
    await page.locator("#value").waitFor({ state: "visible" });
    await shot("revealed");
    // A file (docs/share.md, "Files"): chosen on the create page; after the reveal, its card and Download.
    await page.goto(`${url}/`);
    await page.getByLabel("Access token").fill(master);
    await page.getByLabel("Or share a file").setInputFiles({ name: "quarterly-report.pdf", mimeType: "application/pdf", buffer: Buffer.alloc(48_213, 7) });
    await shot("create-file");
    const report = await client.share({ file: { name: "quarterly-report.pdf", type: "application/pdf", bytes: new Uint8Array(48_213) } });
    await page.goto(report.url);
    await page.getByRole("button", { name: "Reveal the secret" }).click();
    await page.locator("#file-result").waitFor({ state: "visible" });
    await shot("file-revealed");
    // A 2-read link after its first reveal: the recipient may destroy it now (docs/share.md, "Receipts").
    const twice = await client.share("wifi: hunter2", { maxReads: 2 });
    await page.goto(twice.url);
    await page.getByRole("button", { name: "Reveal the secret" }).click();
    await page.getByRole("button", { name: "Destroy it now" }).waitFor({ state: "visible" });
    await shot("destroy");
    const locked = await client.share("locked with a passphrase", { passphrase: "correct horse" });
    await page.goto(locked.url);
    // The passphrase is asked before the read (docs/share.md, "The reveal proof"); a wrong one is refused, nothing read.
    await page.getByLabel("Passphrase").fill("not the passphrase");
    await page.getByRole("button", { name: "Reveal the secret" }).click();
    await page.locator("#error").waitFor({ state: "visible" });
    await shot("passphrase");
    await page.goto(locked.url.split("#")[0] ?? "");
    await page.locator("#error").waitFor({ state: "visible" });
    await shot("incomplete");
    await page.goto(`${url}/s/${"0".repeat(64)}`);
    await shot("not-available");
    // Requests (docs/requests.md, "The answer page and the private link"): asked on the create page,
    // answered on the answer page, opened by the private link.
    const requestShot = (what) => page.screenshot({ path: join(out, `request-${what}-${view.name}.png`), fullPage: true });
    await page.goto(`${url}/`);
    await page.getByLabel("Access token").fill(master);
    await page.getByLabel("What you ask for").fill("The staging database password, please (the one from the wiki).");
    await page.getByRole("button", { name: "Create request" }).click();
    await page.locator("#ask-result").waitFor({ state: "visible" });
    await page.locator("#ask-result").scrollIntoViewIfNeeded();
    await requestShot("asked");
    const answerUrl = await page.locator("#ask-url").inputValue();
    const privateLink = await page.locator("#ask-private").inputValue();
    await page.goto(answerUrl);
    await page.getByLabel("Your answer").fill("staging-db: correct horse battery staple");
    await requestShot("answer");
    await page.getByRole("button", { name: "Send the answer" }).click();
    await page.locator("#sent").waitFor({ state: "visible" });
    await page.goto(privateLink);
    await page.getByRole("button", { name: "Open the answer" }).click();
    await page.locator("#value").waitFor({ state: "visible" });
    await requestShot("opened");
    await context.close();
  }
} finally {
  await browser.close();
  child.kill("SIGTERM");
}
console.log(`screenshots in ${out}`);
