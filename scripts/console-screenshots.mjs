#!/usr/bin/env node
// Screenshots of the console (/ui) for docs/console.md: each page, light and dark, in Debian's
// Chromium (playwright-core, nothing downloaded). Needs `npm run build` first.
//   node scripts/console-screenshots.mjs [OUT_DIR]   (default docs/images)
import { spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";

const root = new URL("..", import.meta.url).pathname;
const out = process.argv[2] ?? join(root, "docs", "images");
mkdirSync(out, { recursive: true });
const master = "screenshot-master-key-0123456789";
const child = spawn(process.execPath, [join(root, "bin", "ephemeral-vault.js"), "--port", "0", "--data-dir", ":memory:"], {
  env: { ...process.env, VAULT_MASTER_KEY: master, VAULT_LOG_LEVEL: "warn", VAULT_WEBHOOK_ALLOW_PRIVATE: "true", VAULT_WEBHOOK_RETRY_BASE_MS: "3600000" },
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
const api = async (method, path, body) => {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${master}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json();
};
// Some data to show.
await api("POST", "/webhooks", { url: "https://127.0.0.1:9/hook", events: ["*"], description: "on-call bot" });
await api("POST", "/secrets", { key: "prod/db/password", value: "correct horse battery staple", ttl_seconds: 3600, max_reads: 5 });
await api("POST", "/secrets", { key: "prod/api/stripe", value: "sk_live_example", ttl_seconds: 30 * 86400 });
await api("POST", "/secrets", { key: "staging/db/password", value: "staging", max_reads: 1 });
await api("POST", "/secrets", { value: "a public one", ttl_seconds: 86400, max_reads: 1 });
// An end-to-end link, as `ephemeral-vault share` makes it (a reveal check: Kind "end-to-end link").
const { VaultClient } = await import(join(root, "packages", "client", "dist", "index.js"));
await new VaultClient({ addr: url, token: master, org: null }).share("an end-to-end one", { ttlSeconds: 86400, maxReads: 1 });
await api("POST", "/keys", { name: "ci deploy", permissions: ["read", "write"], prefix: "prod/" });
await api("POST", "/keys", { name: "auditor", permissions: ["admin"] });
const org = await api("POST", "/orgs", { name: "acme" });
const bot = await api("POST", `/orgs/${org.id}/principals`, { name: "ci-bot", role: "writer" });
await api("POST", `/orgs/${org.id}/principals`, { name: "alice", role: "owner" });
await api("POST", `/orgs/${org.id}/principals/${bot.id}/keys`, { name: "laptop" });
await api("GET", "/secrets/staging%2Fdb%2Fpassword");

const browser = await chromium.launch({ executablePath: process.env.VAULT_CHROMIUM ?? "/usr/bin/chromium", args: ["--no-sandbox"] });
try {
  for (const scheme of ["light", "dark"]) {
    const context = await browser.newContext({ colorScheme: scheme, viewport: { width: 1200, height: 800 } });
    const page = await context.newPage();
    const shot = (what) => page.screenshot({ path: join(out, `console-${what}-${scheme}.png`), fullPage: true });
    await page.goto(`${url}/ui`);
    await shot("signin");
    await page.getByLabel("Token").fill(master);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Overview" }).waitFor();
    await shot("overview");
    await page.goto(`${url}/ui/secrets`);
    await shot("secrets");
    await page.goto(`${url}/ui/secrets/reveal?key=prod%2Fdb%2Fpassword`);
    await shot("reveal");
    await page.getByRole("button", { name: "Reveal and count a read" }).click();
    await shot("revealed");
    await page.goto(`${url}/ui/keys`);
    await page.getByLabel("Name").fill(`reader ${scheme}`);
    await page.getByRole("checkbox", { name: "read", exact: true }).check();
    await page.getByRole("button", { name: "Create a key" }).click();
    await shot("keys");
    await page.goto(`${url}/ui/audit`);
    await shot("audit");
    await page.goto(`${url}/ui/orgs`);
    await shot("orgs");
    await page.goto(`${url}/ui/orgs/view?id=${org.id}`);
    await shot("org");
    await page.goto(`${url}/ui/webhooks`);
    await shot("webhooks");
    await context.close();
  }
} finally {
  await browser.close();
  child.kill("SIGTERM");
}
console.log(`screenshots in ${out}`);
