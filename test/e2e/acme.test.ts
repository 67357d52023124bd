import { X509Certificate } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { request } from "node:https";
import { join } from "node:path";
import { afterAll, afterEach, expect, it } from "vitest";
import { cleanupTemp, killChildren, startVault, tempDir } from "../support/e2e-helpers.js";
import type { VaultProcess } from "../support/e2e-helpers.js";
import { freePort } from "../support/pg-cluster.js";
import { describePebble, startPebble } from "../support/pebble.js";
import type { Pebble } from "../support/pebble.js";
import { httpsRequest } from "../support/tls-helpers.js";

// The built command with VAULT_ACME_DOMAINS against Debian's pebble on loopback
// (docs/deploy.md "Certificates by ACME"), on both engines: HTTP-01 answered for real on
// the redirect port, HTTPS accepted by a client trusting pebble's root, a renewal of a
// short-lived certificate, and a restart that reuses the stored one without a new order.

const pebbles: Pebble[] = [];
afterEach(async () => {
  await killChildren();
  await Promise.all(pebbles.splice(0).map((p) => p.stop()));
});
afterAll(cleanupTemp);

/** GET over HTTPS without checking the certificate (the placeholder is trusted by nobody). */
function insecureGet(url: string): Promise<{ status: number; body: string; issuer: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { rejectUnauthorized: false, agent: false }, (res) => {
      const issuer = (res.socket as import("node:tls").TLSSocket).getPeerX509Certificate()?.issuer ?? "";
      let body = "";
      res.setEncoding("utf8").on("data", (s: string) => (body += s));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body, issuer }));
    });
    req.on("error", reject);
    req.end();
  });
}

function acmeEnv(pebble: Pebble): Record<string, string> {
  return {
    VAULT_ACME_DOMAINS: "localhost",
    VAULT_ACME_EMAIL: "ops@example.com",
    VAULT_ACME_DIRECTORY: pebble.directory,
    VAULT_HTTP_REDIRECT_PORT: String(pebble.httpPort),
    VAULT_LOG_LEVEL: "info",
    // The vault trusts pebble's own HTTPS directory as any Node program trusts an extra CA.
    NODE_EXTRA_CA_CERTS: pebble.caFile,
  };
}

function count(text: string, pattern: RegExp): number {
  return (text.match(new RegExp(pattern, "g")) ?? []).length;
}

async function renewalsMetric(vault: VaultProcess, root: string): Promise<string> {
  const answer = await httpsRequest(`${vault.url.replace("127.0.0.1", "localhost")}/metrics`, [root], { headers: { authorization: "Bearer e2e-master-key-0123456789abcdef" } });
  return answer.body
    .split("\n")
    .filter((l) => l.startsWith("vault_acme_renewals_total{"))
    .join("\n");
}

describePebble("serve with VAULT_ACME_DOMAINS (pebble)", () => {
  it("gets a certificate by HTTP-01, serves HTTPS a client trusting pebble's root accepts, and reuses it after a restart without a new order", async () => {
    const pebble = await startPebble();
    pebbles.push(pebble);
    const dataDir = tempDir("ev-acme-");
    const vault = await startVault(dataDir, { env: acmeEnv(pebble) });
    // Before the order ends: the placeholder, and /health says why (stderr too).
    expect(vault.stderr()).toMatch(/HTTPS waiting for certificate: no certificate yet, ordering it from https:\/\/127\.0\.0\.1:\d+\/dir/);
    const early = await insecureGet(`${vault.url}/health`);
    expect(early.issuer).toContain("waiting for its ACME certificate");
    expect(early.status).toBe(503);
    expect(JSON.parse(early.body)).toEqual({ status: "unavailable", details: { tls: expect.stringMatching(/^waiting for certificate: /) } });

    await expect.poll(() => vault.stdout(), { timeout: 30_000, interval: 200 }).toMatch(/"msg":"ACME certificate order succeeded"/);
    const root = await pebble.issuingRoot();
    const served = await httpsRequest(`${vault.url.replace("127.0.0.1", "localhost")}/health`, [root]);
    expect([served.status, JSON.parse(served.body)]).toEqual([200, { status: "ok" }]);
    // pebble validated our answer on the redirect port, not an always-valid shortcut.
    expect(pebble.log()).toMatch(new RegExp(`Attempting to validate w/ HTTP: http://localhost:${pebble.httpPort}/\\.well-known/acme-challenge/`));
    expect(pebble.issued()).toBe(1);
    expect(await renewalsMetric(vault, root)).toBe('vault_acme_renewals_total{outcome="success"} 1');
    for (const file of ["account.key", "account.json", "cert.pem", "key.pem"]) expect(statSync(join(dataDir, "acme", file)).mode & 0o777).toBe(0o600);
    const stored = new X509Certificate(readFileSync(join(dataDir, "acme", "cert.pem")));
    expect(stored.fingerprint256).toBe(served.fingerprint);
    // Plain HTTP: the redirect, and nothing else.
    const plain = await fetch(`http://127.0.0.1:${pebble.httpPort}/health`, { redirect: "manual" });
    expect(plain.status).toBe(308);
    expect(await vault.stop()).toEqual({ code: 0, signal: null });

    const again = await startVault(dataDir, { env: acmeEnv(pebble) });
    expect(again.stderr()).not.toMatch(/waiting for certificate/);
    const reused = await httpsRequest(`${again.url.replace("127.0.0.1", "localhost")}/health`, [root]);
    expect([reused.status, reused.fingerprint]).toEqual([200, served.fingerprint]);
    expect(again.stdout()).toMatch(/"msg":"ACME certificate loaded from the data dir"/);
    // A moment for an order that should not come.
    await new Promise((r) => setTimeout(r, 1500));
    expect(count(again.stdout(), /ACME certificate order started/)).toBe(0);
    expect(pebble.issued()).toBe(1);
    expect(await renewalsMetric(again, root)).toBe("");
    // SIGHUP (systemctl reload) does not stop a vault whose certificates come by ACME.
    again.child.kill("SIGHUP");
    await expect.poll(() => again.stdout(), { timeout: 5_000, interval: 100 }).toMatch(/nothing to reload: certificates by ACME/);
    expect((await httpsRequest(`${again.url.replace("127.0.0.1", "localhost")}/health`, [root])).status).toBe(200);
    expect(await again.stop()).toEqual({ code: 0, signal: null });
  }, 60_000);

  it("renews a short-lived certificate after two thirds of its lifetime, after a restart, with an account without a contact", async () => {
    const pebble = await startPebble({ validitySeconds: 15 });
    pebbles.push(pebble);
    const dataDir = tempDir("ev-acme-");
    const env = { ...acmeEnv(pebble), VAULT_ACME_EMAIL: undefined };
    const first = await startVault(dataDir, { env });
    await expect.poll(() => count(first.stdout(), /"msg":"ACME certificate order succeeded"/), { timeout: 30_000, interval: 200 }).toBe(1);
    expect(await first.stop()).toEqual({ code: 0, signal: null });
    // The restarted vault renews with the stored account (its URL kept in acme/account.json).
    const vault = await startVault(dataDir, { env });
    const root = await pebble.issuingRoot();
    const url = `${vault.url.replace("127.0.0.1", "localhost")}/health`;
    const before = await httpsRequest(url, [root]);
    expect(before.status).toBe(200);
    const restarted = Date.now();
    // 15 s lifetime: the renewal is due 10 s after its notBefore.
    await expect.poll(() => count(vault.stdout(), /"msg":"ACME certificate order succeeded"/), { timeout: 40_000, interval: 200 }).toBe(1);
    expect(Date.now() - restarted).toBeGreaterThan(3_000);
    expect(vault.stdout()).not.toMatch(/ACME account key created/);
    const after = await httpsRequest(url, [root]);
    expect(after.status).toBe(200);
    expect(after.fingerprint).not.toBe(before.fingerprint);
    expect(pebble.issued()).toBe(2);
    expect(count(pebble.log(), /There are now \d+ accounts in memory/)).toBe(1);
    expect(await renewalsMetric(vault, root)).toBe('vault_acme_renewals_total{outcome="success"} 1');
    expect(await vault.stop()).toEqual({ code: 0, signal: null });
  }, 90_000);

  it("says why on stderr and /health while the challenge cannot be validated, and counts the failure", async () => {
    const pebble = await startPebble();
    pebbles.push(pebble);
    const env = acmeEnv(pebble);
    // The redirect listener elsewhere than where pebble validates (a port 80 not forwarded):
    // the order fails, the vault keeps serving the placeholder.
    env.VAULT_HTTP_REDIRECT_PORT = String(await freePort());
    const vault = await startVault(tempDir("ev-acme-"), { env });
    await expect.poll(() => vault.stdout(), { timeout: 20_000, interval: 200 }).toMatch(/"outcome":"failure".*"msg":"ACME certificate order failed"/);
    expect(vault.stderr()).toMatch(/HTTPS waiting for certificate: the last order failed \(.*\); next attempt at \d{4}-/);
    const health = await insecureGet(`${vault.url}/health`);
    expect(health.status).toBe(503);
    expect(JSON.parse(health.body).details.tls).toMatch(/^waiting for certificate: the last order failed/);
    const metrics = await new Promise<string>((resolve, reject) => {
      const req = request(`${vault.url}/metrics`, { rejectUnauthorized: false, agent: false, headers: { authorization: "Bearer e2e-master-key-0123456789abcdef" } }, (res) => {
        let body = "";
        res.setEncoding("utf8").on("data", (s: string) => (body += s));
        res.on("end", () => resolve(body));
      });
      req.on("error", reject);
      req.end();
    });
    expect(metrics).toContain('vault_acme_renewals_total{outcome="failure"} 1');
    expect(`${vault.stdout()}${vault.stderr()}`).not.toMatch(/PRIVATE KEY/);
    expect(await vault.stop()).toEqual({ code: 0, signal: null });
  }, 60_000);
});
