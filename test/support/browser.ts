import { existsSync } from "node:fs";
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { AxeBuilder } from "@axe-core/playwright";
import { chromium } from "playwright-core";
import type { Browser, Page } from "playwright-core";
import { describe } from "vitest";

/**
 * Debian's Chromium (or VAULT_CHROMIUM): the pages are tested in a real
 * browser, never a downloaded one (docs/testing.md, "Pages in Chromium").
 */
export function findChromium(env: NodeJS.ProcessEnv = process.env): string | null {
  for (const candidate of [env.VAULT_CHROMIUM, "/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"]) {
    if (candidate !== undefined && candidate !== "" && existsSync(candidate)) return candidate;
  }
  return null;
}

/**
 * `describe` when a Chromium is installed; skipped (saying why) otherwise,
 * except in CI (CI=true), where a missing browser fails the run: .ci/run
 * installs Debian's `chromium`.
 */
export function describeBrowser(name: string, fn: () => void): void {
  if (findChromium() !== null || process.env.CI === "true") describe(name, fn);
  else describe.skip(`${name} (skipped: no Chromium; apt-get install chromium, or set VAULT_CHROMIUM)`, fn);
}

/** Starts headless Chromium from the system binary. @throws Error when none is installed. */
export async function launchBrowser(): Promise<Browser> {
  const executablePath = findChromium();
  if (executablePath === null) throw new Error("no Chromium: apt-get install chromium (or set VAULT_CHROMIUM)");
  // --no-sandbox: CI runs as root, where Chromium's sandbox cannot start.
  return chromium.launch({ executablePath, args: ["--no-sandbox", "--disable-dev-shm-usage"] });
}

/**
 * Records Content-Security-Policy violations in the page (the
 * `securitypolicyviolation` event, listened for before any script runs).
 * @returns a function giving the violations seen so far.
 */
export async function watchCsp(page: Page): Promise<() => Promise<string[]>> {
  await page.addInitScript(() => {
    const seen: string[] = [];
    (window as unknown as { __csp: string[] }).__csp = seen;
    document.addEventListener("securitypolicyviolation", (e) => seen.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  const consoleErrors: string[] = [];
  page.on("console", (msg) => {
    if (msg.type() === "error" && /Content Security Policy/i.test(msg.text())) consoleErrors.push(msg.text());
  });
  return async () => [...((await page.evaluate(() => (window as unknown as { __csp?: string[] }).__csp ?? [])) as string[]), ...consoleErrors];
}

/** The axe-core violations of impact serious or critical on the current page (WCAG 2.x A and AA rules). */
export async function seriousA11yViolations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]).analyze();
  return result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
}

/** A recording reverse proxy: every request's method, URL and headers as the server received them. */
export interface RecordingProxy {
  url: string;
  /** `METHOD URL` of each request, and its headers joined. */
  log: string[];
  /** Points the proxy at the vault (known only once it listens). */
  target(url: string): void;
  close(): Promise<void>;
}

/** Starts a reverse proxy on 127.0.0.1 that records each request before passing it on. */
export async function startRecordingProxy(): Promise<RecordingProxy> {
  const log: string[] = [];
  let upstream: URL | undefined;
  const server = createServer((req, res) => {
    log.push(`${req.method} ${req.url} ${JSON.stringify(req.headers)}`);
    if (upstream === undefined) {
      res.writeHead(502).end();
      return;
    }
    const up = request(
      { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    up.on("error", () => res.writeHead(502).end());
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    log,
    target: (url) => {
      upstream = new URL(url);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
