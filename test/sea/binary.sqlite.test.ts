import { execFile, spawn } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import pkg from "../../package.json" with { type: "json" };
import { loadAssets } from "../../src/http/pages/assets.js";
import { findChromium, launchBrowser } from "../support/browser.js";
import { docExamples } from "../support/doc-examples.js";
import { ROOT } from "../support/e2e-helpers.js";
import { findPebble, startPebble } from "../support/pebble.js";
import { fingerprintOf, httpsRequest, makeCa, makeLeaf, writePair } from "../support/tls-helpers.js";
import { approveDevice, CookieFetch, startTestIdp } from "../support/oidc-provider.js";

// The single executable (npm run build:binary; docs/deploy.md), tested as a user
// would: copied into an empty directory (no node_modules, no package.json, no
// node on the PATH), started, used through its own client verbs, stopped.
const NAME = `ephemeral-vault-${process.platform}-${process.arch}`;
const BUILT = join(ROOT, "dist", NAME);
/** The newest modification time under a directory, ms. */
const newest = (path: string): number =>
  statSync(path).isDirectory() ? Math.max(0, ...readdirSync(path).map((name) => newest(join(path, name)))) : statSync(path).mtimeMs;
// Missing, or older than the sources it was built from: a developer's run skips
// (npm run build:binary to include it); CI (.ci/run builds it first) fails.
const present = existsSync(BUILT) && statSync(BUILT).mtimeMs >= Math.max(newest(join(ROOT, "src")), statSync(join(ROOT, "schema.sql")).mtimeMs);
if (!present && process.env.CI === "true") {
  throw new Error(`${BUILT} is missing or older than src/: CI runs npm run build:binary before the tests (.ci/run)`);
}

const execFileP = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), "ev-binary-"));
const bin = join(dir, "ephemeral-vault");
const tmp = join(dir, "tmp");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Only what a user's shell would hold: the directory, a TMPDIR of its own; no VAULT_*, no NODE_*. */
const env = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({ PATH: dir, HOME: dir, TMPDIR: tmp, ...extra });

async function runBin(args: string[], options: { input?: string; env?: Record<string, string> } = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(bin, args, { cwd: dir, env: env(options.env) });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (b: Buffer) => (stdout += b.toString()));
    child.stderr.on("data", (b: Buffer) => (stderr += b.toString()));
    child.once("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.input ?? "");
  });
}

/** Starts `serve --print-url-json`; resolves once its line is out, with the time from spawn to it, ms. */
async function serve(args: string[], extraEnv: Record<string, string> = {}) {
  const started = performance.now();
  const child = spawn(bin, ["serve", "--port", "0", "--print-url-json", ...args], { cwd: dir, env: env(extraEnv) });
  let stdout = "";
  let stderr = "";
  child.stderr.on("data", (b: Buffer) => (stderr += b.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const line = await new Promise<string>((resolve, reject) => {
    child.stdout.on("data", (b: Buffer) => {
      stdout += b.toString();
      const nl = stdout.indexOf("\n");
      if (nl >= 0) resolve(stdout.slice(0, nl));
    });
    void exited.then((code) => reject(new Error(`exited ${code} before listening: ${stderr}`)));
  });
  const startMs = performance.now() - started;
  const { url, token } = JSON.parse(line) as { url: string; token: string };
  return { child, url, token, startMs, exited, stderr: () => stderr };
}

describe.skipIf(!present)(`the single executable dist/${NAME}${present ? "" : " (skipped: missing or older than src/; npm run build:binary)"}`, () => {
  it("runs from an empty directory: /health, put and get through its own verbs, SIGTERM exits 0", async () => {
    copyFileSync(BUILT, bin);
    chmodSync(bin, 0o755);
    mkdirSync(tmp);
    expect(readdirSync(dir).sort()).toEqual(["ephemeral-vault", "tmp"]);
    // The checksum line written beside it verifies the download as docs/deploy.md says.
    const sums = join(tmp, "sums");
    mkdirSync(sums);
    copyFileSync(BUILT, join(sums, NAME));
    copyFileSync(`${BUILT}.sha256`, join(sums, "SHA256SUMS"));
    const checked = await execFileP("sha256sum", ["-c", "--ignore-missing", "SHA256SUMS"], { cwd: sums });
    expect(checked.stdout).toBe(`${NAME}: OK\n`);
    rmSync(sums, { recursive: true });

    const vault = await serve(["--data-dir", "./data"]);
    console.info(`${NAME}: ${(statSync(bin).size / 1024 / 1024).toFixed(1)} MiB, first start (files written) to listening: ${vault.startMs.toFixed(0)} ms`);
    expect(vault.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const health = await fetch(`${vault.url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: "ok" });

    const client = { VAULT_ADDR: vault.url, VAULT_TOKEN: vault.token };
    expect((await runBin(["put", "prod/db_password"], { input: "hunter2", env: client })).code).toBe(0);
    const got = await runBin(["get", "prod/db_password"], { env: client });
    expect(got).toMatchObject({ code: 0, stdout: "hunter2" });
    const ls = await runBin(["ls", "--json"], { env: client });
    expect(JSON.parse(ls.stdout)).toEqual([expect.objectContaining({ key: "prod/db_password", read_count: 1 })]);
    expect((await runBin(["get", "missing"], { env: client })).code).toBe(1);

    vault.child.kill("SIGTERM");
    expect(await vault.exited).toBe(0);

    // A second start reuses the verified files.
    const again = await serve(["--data-dir", "./data"]);
    console.info(`${NAME}: start to listening with its files in place: ${again.startMs.toFixed(0)} ms`);
    expect(again.token).toBe(vault.token);
    again.child.kill("SIGTERM");
    expect(await again.exited).toBe(0);
  });

  it("runs the other commands with the same exit codes: --version, --help, a bad flag, backup, audit verify", async () => {
    expect(await runBin(["--version"])).toMatchObject({ code: 0, stdout: `${pkg.version}\n` });
    const help = await runBin(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("--print-url-json");
    expect((await runBin(["serve", "--port", "abc"])).code).toBe(2);
    expect((await runBin(["put", "k"], { input: "v", env: { VAULT_ADDR: "http://127.0.0.1:1", VAULT_TOKEN: "x".repeat(20) } })).code).toBe(2);
    // Commands that open the database themselves (better-sqlite3's addon from the executable).
    const backup = await runBin(["backup", join(dir, "b.vault"), "--data-dir", "./data"]);
    expect(backup.code, backup.stderr).toBe(0);
    const verify = await runBin(["audit", "verify", "--data-dir", "./data"]);
    expect(verify.code, verify.stderr).toBe(0);
    const keygen = await runBin(["license", "keygen", "--private-key", join(dir, "license.pem")]);
    expect(keygen.code, keygen.stderr).toBe(0);
  });

  it("serves every page and every asset those pages name, the npm package's bytes, and reveals a link in Chromium", async () => {
    const vault = await serve(["--data-dir", "./pages"]);
    try {
      // What the npm package serves (src/http/pages/assets.ts over this repo's dist/ui).
      const packaged = loadAssets();
      const checked = new Set<string>();
      /** Every script, stylesheet and icon a page's HTML names, fetched from the executable: 200, its type, the package's bytes. */
      const checkAssets = async (html: string, pageUrl: string) => {
        const refs = [...html.matchAll(/<script\b[^>]*\bsrc="([^"]+)"/g), ...html.matchAll(/<link\b[^>]*\bhref="([^"]+)"/g)].map((m) => m[1] as string);
        expect(refs.length, pageUrl).toBeGreaterThanOrEqual(2);
        for (const ref of refs) {
          const url = new URL(ref.replaceAll("&amp;", "&"), pageUrl);
          const name = url.pathname.replace(/^\/assets\//, "");
          const want = packaged.get(name);
          expect(want, `${pageUrl} names ${ref}, which the npm package does not serve`).toBeDefined();
          const res = await fetch(url);
          expect(res.status, `${url}`).toBe(200);
          expect(res.headers.get("content-type"), `${url}`).toBe(want?.type);
          expect(await res.text(), `${url}`).toBe(want?.body);
          checked.add(name);
        }
      };
      const page = async (url: string, init: RequestInit = {}) => {
        const res = await fetch(url, init);
        expect(res.status, url).toBe(200);
        expect(res.headers.get("content-type"), url).toMatch(/^text\/html/);
        const html = await res.text();
        await checkAssets(html, res.url);
        return html;
      };

      // A real share, made with the executable's own CLI (through the API); its page by a plain GET (no read).
      const value = `binary reveal ${Date.now()} ✓`;
      const shared = await runBin(["share", "--addr", vault.url], { input: value, env: { VAULT_TOKEN: vault.token } });
      expect(shared.code, shared.stderr).toBe(0);
      const link = shared.stdout.trim();
      expect(link).toMatch(/\/s\/[0-9a-f]{64}#/);
      await page(`${vault.url}/`);
      await page(link.split("#")[0] as string);
      await page(`${vault.url}/ui`);
      // A request made with the executable's CLI: its answer page and its private link's page (docs/requests.md).
      const asked = await runBin(["request", "the binary's test key", "--addr", vault.url], {
        env: { VAULT_TOKEN: vault.token, VAULT_CONFIG_DIR: join(dir, "config") },
      });
      expect(asked.code, asked.stderr).toBe(0);
      const answerLink = asked.stdout.trim();
      expect(answerLink).toMatch(/\/r\/[0-9a-f]{64}$/);
      await page(answerLink);
      await page(`${answerLink}/open`);

      // Chromium: the recipient page reveals the value (share.js decrypts it), then the console, signed in with the master key.
      const browser = findChromium() === null && process.env.CI !== "true" ? undefined : await launchBrowser();
      if (browser !== undefined) {
        try {
          const context = await browser.newContext();
          const tab = await context.newPage();
          await tab.goto(link);
          await tab.getByRole("button", { name: "Reveal the secret" }).click();
          await tab.locator("#value").waitFor({ state: "visible" });
          expect(await tab.locator("#value").textContent()).toBe(value);

          await tab.goto(`${vault.url}/ui`);
          await tab.getByLabel("Token").fill(vault.token);
          await tab.getByRole("button", { name: "Sign in" }).click();
          await tab.getByRole("heading", { name: "Overview" }).waitFor();
          // The raw HTML of each section the navigation links, with the session's cookie.
          const cookie = (await context.cookies()).map((c) => `${c.name}=${c.value}`).join("; ");
          const overview = await page(tab.url(), { headers: { cookie } });
          const nav = /<nav aria-label="Console sections">([\s\S]*?)<\/nav>/.exec(overview)?.[1] ?? "";
          const sections = [...nav.matchAll(/href="([^"]+)"/g)].map((m) => new URL(m[1] as string, tab.url()).href);
          expect(sections.length).toBeGreaterThanOrEqual(5);
          for (const section of sections) await page(section, { headers: { cookie } });
          await context.close();
        } finally {
          await browser.close();
        }
      }
      // Every asset any page names, the stylesheet and the icon included.
      expect([...checked].sort()).toEqual([...packaged.keys()].sort());
    } finally {
      vault.child.kill("SIGTERM");
      await vault.exited;
    }
  });

  it("writes only its native addon, into a private per-user directory whose ancestors others cannot change", async () => {
    // No XDG_RUNTIME_DIR in env(): the cache directory under HOME.
    const parent = join(dir, ".cache", "ephemeral-vault");
    const [hashDir] = readdirSync(parent);
    const root = join(parent, hashDir as string);
    expect(statSync(parent).mode & 0o777).toBe(0o700);
    expect(statSync(root).mode & 0o777).toBe(0o700);
    // Schemas and page scripts are served from memory: nothing but the addon is on disk.
    expect(readdirSync(root)).toEqual(["better_sqlite3.node"]);
    expect(existsSync(join(tmp, `ephemeral-vault-${process.getuid?.() ?? 0}`))).toBe(false);
    const addon = join(root, "better_sqlite3.node");
    chmodSync(addon, 0o600);
    writeFileSync(addon, "not the addon");
    const vault = await serve(["--data-dir", ":memory:"]);
    expect((await fetch(`${vault.url}/health`)).status).toBe(200);
    vault.child.kill("SIGTERM");
    expect(await vault.exited).toBe(0);
    expect(statSync(addon).size).toBeGreaterThan(100_000);

    chmodSync(parent, 0o777);
    try {
      const refused = await runBin(["serve", "--port", "0", "--data-dir", ":memory:"]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain("is not a private directory");
    } finally {
      chmodSync(parent, 0o700);
    }

    // $XDG_RUNTIME_DIR, when set, is the default.
    const runtime = join(dir, "run");
    mkdirSync(runtime, { mode: 0o700 });
    const ran = await runBin(["audit", "verify", "--data-dir", "./data"], { env: { XDG_RUNTIME_DIR: runtime } });
    expect(ran.code, ran.stderr).toBe(0);
    expect(readdirSync(join(runtime, "ephemeral-vault"))).toHaveLength(1);

    // VAULT_BINARY_DIR below a directory others can write (no sticky bit) is refused; below a sticky one (as /tmp) it is not.
    const open = join(dir, "open");
    mkdirSync(open);
    chmodSync(open, 0o777);
    const below = await runBin(["--version"], { env: { VAULT_BINARY_DIR: join(open, "ev") } });
    expect(below.code).toBe(1);
    expect(below.stderr).toContain(`${open} can be changed by other users`);
    chmodSync(open, 0o1777);
    const sticky = await runBin(["--version"], { env: { VAULT_BINARY_DIR: join(open, "ev") } });
    expect(sticky, sticky.stderr).toMatchObject({ code: 0, stdout: `${pkg.version}\n` });
  });

  it("serves HTTPS from VAULT_TLS_CERT / VAULT_TLS_KEY with the redirect listener; its own CLI trusts the CA from VAULT_CACERT", async () => {
    const authority = await makeCa();
    const leaf = await makeLeaf(authority);
    const certs = join(dir, "certs");
    mkdirSync(certs);
    const files = writePair(certs, leaf);
    const caFile = join(certs, "ca.pem");
    writeFileSync(caFile, authority.cert);
    const vault = await serve(["--data-dir", ":memory:", "--http-redirect-port", "0"], { VAULT_TLS_CERT: files.cert, VAULT_TLS_KEY: files.key });
    try {
      expect(vault.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      const health = await httpsRequest(`${vault.url}/health`, [authority.cert]);
      expect(health.status).toBe(200);
      expect(health.fingerprint).toBe(fingerprintOf(leaf));
      expect(health.headers["strict-transport-security"]).toBe("max-age=63072000");
      const client = { VAULT_ADDR: vault.url, VAULT_TOKEN: vault.token, VAULT_CACERT: caFile };
      expect((await runBin(["put", "tls/key"], { input: "over https", env: client })).code).toBe(0);
      expect(await runBin(["get", "tls/key"], { env: client })).toMatchObject({ code: 0, stdout: "over https" });
      const untrusted = await runBin(["get", "tls/key"], { env: { VAULT_ADDR: vault.url, VAULT_TOKEN: vault.token } });
      expect(untrusted.code).toBe(2);
      expect(untrusted.stderr).toMatch(/its TLS certificate is not trusted: .*set VAULT_CACERT/);
      const redirectPort = /"redirect_port":(\d+)/.exec(vault.stderr())?.[1];
      expect(redirectPort).toBeDefined();
      const plain = await fetch(`http://127.0.0.1:${redirectPort}/health?x=1`, { redirect: "manual" });
      expect(plain.status).toBe(308);
      expect(plain.headers.get("location")).toBe(`https://127.0.0.1:${new URL(vault.url).port}/health?x=1`);
    } finally {
      vault.child.kill("SIGTERM");
      expect(await vault.exited).toBe(0);
    }
  });

  it("gets its certificate by ACME from pebble, serves it, reuses it after a restart without a new order, and renews it", async () => {
    if (findPebble() === null && process.env.CI !== "true") return; // pebble: .ci/run installs it
    // 30 s certificates: the restart comes before the renewal, due 20 s after issuance.
    const pebble = await startPebble({ validitySeconds: 30 });
    try {
      const dataDir = join(dir, "acme-data");
      const acmeEnv = {
        VAULT_ACME_DOMAINS: "localhost",
        VAULT_ACME_DIRECTORY: pebble.directory,
        VAULT_HTTP_REDIRECT_PORT: String(pebble.httpPort),
        VAULT_LOG_LEVEL: "info",
        NODE_EXTRA_CA_CERTS: pebble.caFile,
      };
      const first = await serve(["--data-dir", dataDir], acmeEnv);
      let fingerprint = "";
      try {
        expect(first.stderr()).toMatch(/HTTPS waiting for certificate: no certificate yet/);
        await expect.poll(() => first.stderr(), { timeout: 30_000, interval: 200 }).toMatch(/"msg":"ACME certificate order succeeded"/);
        const root = await pebble.issuingRoot();
        const health = await httpsRequest(`${first.url.replace("127.0.0.1", "localhost")}/health`, [root]);
        expect(health.status).toBe(200);
        fingerprint = health.fingerprint;
        expect(pebble.issued()).toBe(1);
      } finally {
        first.child.kill("SIGTERM");
        expect(await first.exited).toBe(0);
      }
      const again = await serve(["--data-dir", dataDir], acmeEnv);
      try {
        const root = await pebble.issuingRoot();
        const health = await httpsRequest(`${again.url.replace("127.0.0.1", "localhost")}/health`, [root]);
        expect([health.status, health.fingerprint]).toEqual([200, fingerprint]);
        expect(again.stderr()).toMatch(/"msg":"ACME certificate loaded from the data dir"/);
        expect(again.stderr()).not.toMatch(/ACME certificate order started/);
        expect(pebble.issued()).toBe(1);
        await expect.poll(() => again.stderr(), { timeout: 40_000, interval: 250 }).toMatch(/"msg":"ACME certificate order succeeded"/);
        const renewed = await httpsRequest(`${again.url.replace("127.0.0.1", "localhost")}/health`, [root]);
        expect(renewed.status).toBe(200);
        expect(renewed.fingerprint).not.toBe(fingerprint);
        expect(pebble.issued()).toBe(2);
      } finally {
        again.child.kill("SIGTERM");
        expect(await again.exited).toBe(0);
      }
    } finally {
      await pebble.stop();
    }
  }, 90_000);

  it("signs people in with OpenID Connect (openid-client in the bundle): the console's redirect to the provider, and login by the device flow", async () => {
    const idp = await startTestIdp({ dana: { email: "dana@example.com", name: "Dana", groups: ["devs"] } });
    const first = await serve(["--data-dir", "./sso"]);
    const org = await fetch(`${first.url}/orgs`, { method: "POST", headers: { authorization: `Bearer ${first.token}`, "content-type": "application/json" }, body: JSON.stringify({ name: "people" }) });
    const orgId = ((await org.json()) as { id: string }).id;
    first.child.kill("SIGTERM");
    expect(await first.exited).toBe(0);
    const sso = { VAULT_OIDC_ISSUER: idp.issuer, VAULT_OIDC_CLIENT_ID: idp.clientId, VAULT_OIDC_CLIENT_SECRET: idp.clientSecret, VAULT_OIDC_ORG: orgId, VAULT_OIDC_ROLE_MAP: "devs=writer" };
    const vault = await serve(["--data-dir", "./sso"], sso);
    try {
      idp.setRedirectUris([`${vault.url}/ui/oidc/callback`]);
      const start = await fetch(`${vault.url}/ui/oidc/login`, { redirect: "manual" });
      expect(start.status).toBe(303);
      expect(start.headers.get("location")).toMatch(new RegExp(`^${idp.issuer}/auth\\?`));
      const approved = new Promise<void>((resolve, reject) => {
        const child = spawn(bin, ["login"], { cwd: dir, env: env({ VAULT_ADDR: vault.url }) });
        let stderr = "";
        let approving: Promise<string> | undefined;
        child.stderr.on("data", (b: Buffer) => {
          stderr += b.toString();
          const m = /open (\S+) and enter the code (\S+)/.exec(stderr);
          if (m !== null && approving === undefined) approving = approveDevice(new CookieFetch(), idp, m[1] as string, m[2] as string, "dana");
        });
        child.once("close", (code) => (code === 0 ? resolve() : reject(new Error(`login exited ${code}: ${stderr}`))));
      });
      await approved;
      const put = await runBin(["put", "app/db"], { input: "from-sso", env: { VAULT_ADDR: vault.url } });
      expect(put.code, put.stderr).toBe(0);
      expect(await runBin(["get", "app/db"], { env: { VAULT_ADDR: vault.url } })).toMatchObject({ code: 0, stdout: "from-sso" });
    } finally {
      vault.child.kill("SIGTERM");
      expect(await vault.exited).toBe(0);
      await idp.close();
    }
  }, 60_000);

  it("passes its url and token to another program in the CI job of docs/embedding.md", async () => {
    const script = docExamples("embedding.md").get("ci-vault.sh") as string;
    writeFileSync(join(dir, "ci-vault.sh"), script);
    const { stdout } = await execFileP("bash", ["ci-vault.sh"], { cwd: dir, env: env({ PATH: `${dir}:/usr/bin:/bin` }), timeout: 60_000 });
    expect(stdout).toMatch(/^ok: http:\/\/127\.0\.0\.1:\d+\n$/);
  });
});
