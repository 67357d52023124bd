import { afterAll, describe, expect, it } from "vitest";
import { sealEnvelope } from "@ephemeral-vault/client";
import { cleanupTemp, killChildren, startVault, tempDir } from "../../../support/e2e-helpers.js";
import { buildTestVault } from "../../../support/helpers.js";
import type { TestVault } from "../../../support/helpers.js";

// The share pages' routes in process, on both engines (docs/share.md): what a page load and a
// reveal do to the secret, its audit rows and events; who may reach /s/; the anonymous caps.

async function publicSecret(v: TestVault, body: Record<string, unknown>): Promise<{ id: string; url: string }> {
  const res = await v.asMaster("POST", "/secrets", body);
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string; url: string };
}

async function readCount(v: TestVault, id: string): Promise<number | undefined> {
  const body = (await (await v.asMaster("GET", "/secrets")).json()) as { secrets: Array<{ id?: string; read_count: number }> };
  return body.secrets.find((s) => s.id === id)?.read_count;
}

async function auditOf(v: TestVault, key: string): Promise<Array<{ action: string; actor: string | null }>> {
  const body = (await (await v.asMaster("GET", `/audit?key=${key}`)).json()) as { entries: Array<{ action: string; actor: string | null }> };
  return body.entries.reverse();
}

describe("GET /s/<id>", () => {
  it("answers a page that reads nothing, however often it is loaded; the url of a public secret names it", async () => {
    const v = buildTestVault();
    const { id, url } = await publicSecret(v, { value: "page value", max_reads: 2, ttl_seconds: 3600 });
    expect(url).toBe(`http://vault.test/s/${id}`);
    for (let i = 0; i < 5; i++) {
      const res = await v.request("GET", `/s/${id}`, { token: null });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^text\/html/);
      const html = await res.text();
      expect(html).not.toContain("page value");
      expect(html).toContain("It can be revealed 2 more times.");
    }
    expect((await v.request("HEAD", `/s/${id}`, { token: null })).status).toBe(200);
    expect(await readCount(v, id)).toBe(0);
    expect((await auditOf(v, id)).map((e) => e.action)).toEqual(["secret.created"]);
  });

  it("answers the same 404 page for a keyed secret's name, an unknown, expired or burned id", async () => {
    const v = buildTestVault();
    await v.asMaster("POST", "/secrets", { key: "team/db", value: "keyed" });
    const expired = await publicSecret(v, { value: "x", ttl_seconds: 1 });
    const burned = await publicSecret(v, { value: "x", max_reads: 1 });
    expect((await v.asMaster("GET", `/secrets/${burned.id}`)).status).toBe(200);
    v.clock.advance(2000);
    const pages: string[] = [];
    for (const path of ["/s/team/db", "/s/team%2Fdb", `/s/${"a".repeat(64)}`, `/s/${expired.id}`, `/s/${burned.id}`, "/s", "/s/"]) {
      const res = await v.request("GET", path, { token: null });
      expect(res.status, path).toBe(404);
      // The same page; only the relative way back to the assets differs with the path's depth.
      pages.push((await res.text()).replace(/href="(\.\.\/)*assets\//g, 'href="assets/'));
    }
    expect(new Set(pages).size).toBe(1);
  });
});

describe("POST /s/<id>/reveal", () => {
  it("is one read through the lifecycle: counted, burned at max_reads, audited with actor share-page", async () => {
    const v = buildTestVault();
    const { id } = await publicSecret(v, { value: "reveal me", max_reads: 2 });
    const first = await v.request("POST", `/s/${id}/reveal`, { token: null });
    expect(first.status).toBe(200);
    expect(first.headers.get("cache-control")).toBe("no-store");
    expect(await first.json()).toMatchObject({ id, value: "reveal me", read_count: 1, max_reads: 2 });
    const second = await v.request("POST", `/s/${id}/reveal`, { token: null });
    expect(await second.json()).toMatchObject({ value: "reveal me", read_count: 2 });
    const third = await v.request("POST", `/s/${id}/reveal`, { token: null });
    expect(third.status).toBe(404);
    expect(await third.json()).toEqual({ error: "not available" });
    expect((await v.asMaster("GET", `/secrets/${id}`)).status).toBe(404);
    const audit = await auditOf(v, id);
    expect(audit.map((e) => `${e.action}:${e.actor}`)).toEqual([
      "secret.created:master",
      "secret.read:share-page",
      "secret.read:share-page",
      "secret.burned:share-page",
    ]);
  });

  it("never reads a keyed secret, even one named like an id", async () => {
    const v = buildTestVault();
    await v.asMaster("POST", "/secrets", { key: "team/db", value: "keyed" });
    expect((await v.request("POST", "/s/team/db/reveal", { token: null })).status).toBe(404);
    const body = (await (await v.asMaster("GET", "/secrets")).json()) as { secrets: Array<{ key?: string; read_count: number }> };
    expect(body.secrets.find((s) => s.key === "team/db")?.read_count).toBe(0);
  });

  it("counts misses against the brute-force guard (429 with Retry-After once over the limit)", async () => {
    const v = buildTestVault({ trustProxy: true, authFailLimit: 3 });
    const from = { token: null, headers: { "X-Forwarded-For": "203.0.113.9" } };
    for (let i = 0; i < 3; i++) expect((await v.request("POST", `/s/${"b".repeat(64)}/reveal`, from)).status).toBe(404);
    const blocked = await v.request("POST", `/s/${"b".repeat(64)}/reveal`, from);
    expect(blocked.status).toBe(429);
    expect(blocked.headers.get("retry-after")).toMatch(/^\d+$/);
    expect((await v.request("GET", `/s/${"b".repeat(64)}`, from)).status).toBe(429);
    // Another address is not affected.
    expect((await v.request("GET", `/s/${"b".repeat(64)}`, { token: null, headers: { "X-Forwarded-For": "203.0.113.10" } })).status).toBe(404);
  });
});

describe("end-to-end envelopes", () => {
  it("a value of VAULT_MAX_VALUE_BYTES fits as an envelope; a plain value one byte over does not", async () => {
    const v = buildTestVault({ maxValueBytes: 1024 });
    const { envelope } = await sealEnvelope("é".repeat(512));
    expect(Buffer.byteLength(envelope)).toBeGreaterThan(1024);
    expect((await v.asMaster("POST", "/secrets", { value: envelope })).status).toBe(201);
    expect((await v.asMaster("POST", "/secrets", { value: "x".repeat(1025) })).status).toBe(413);
    const forged = JSON.stringify({ v: 1, alg: "A256GCM", kdf: "none", iv: "AAAA", ct: "A".repeat(5000) });
    expect((await v.asMaster("POST", "/secrets", { value: forged })).status).toBe(413);
  });
});

describe("the settings", () => {
  it("VAULT_SHARE_PAGE=false: /s/ answers the API's JSON 404, and a public url names the API", async () => {
    const v = buildTestVault({ share: { page: false, anonymous: false, anonymousPerMinute: 10 } });
    const { id, url } = await publicSecret(v, { value: "programs only" });
    expect(url).toBe(`http://vault.test/secrets/${id}`);
    const res = await v.request("GET", `/s/${id}`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: "not found" });
    expect((await v.request("POST", `/s/${id}/reveal`)).status).toBe(404);
    expect((await v.request("GET", "/", { token: null })).status).toBe(401);
    expect(await readCount(v, id)).toBe(0);
  });

  it("anonymous creation is off by default (404), and on: capped, rate-limited per address, audited as share-page", async () => {
    const off = buildTestVault();
    expect((await off.request("POST", "/s", { token: null, body: { value: "x" } })).status).toBe(404);
    const v = buildTestVault({ trustProxy: true, share: { page: true, anonymous: true, anonymousPerMinute: 3 } });
    const from = (ip: string, body: unknown) => ({ token: null, body, headers: { "X-Forwarded-For": ip } });
    const made = await v.request("POST", "/s", from("198.51.100.1", { value: "anon" }));
    expect(made.status).toBe(201);
    const { id, url } = (await made.json()) as { id: string; url: string };
    expect(url).toBe(`http://vault.test/s/${id}`);
    const meta = (await (await v.asMaster("GET", "/secrets")).json()) as { secrets: Array<{ id?: string; max_reads: number; expires_at: number; created_at: number }> };
    const entry = meta.secrets.find((s) => s.id === id);
    expect(entry?.max_reads).toBe(1);
    expect((entry?.expires_at ?? 0) - (entry?.created_at ?? 0)).toBe(604_800);
    expect((await auditOf(v, id)).map((e) => `${e.action}:${e.actor}`)).toEqual(["secret.created:share-page"]);
    for (const [body, status] of [
      [{ value: "x", ttl_seconds: 604_801 }, 400],
      [{ value: "x", max_reads: 11 }, 400],
      [{ value: "x", key: "named" }, 400],
      [{ value: "x".repeat(70_000) }, 413],
    ] as const) {
      expect((await v.request("POST", "/s", from("198.51.100.2", body))).status, JSON.stringify(body).slice(0, 40)).toBe(status);
    }
    expect((await v.request("POST", "/s", from("198.51.100.1", { value: "2" }))).status).toBe(201);
    expect((await v.request("POST", "/s", from("198.51.100.1", { value: "3" }))).status).toBe(201);
    const limited = await v.request("POST", "/s", from("198.51.100.1", { value: "4" }));
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toMatch(/^\d+$/);
    v.clock.advance(60_000);
    expect((await v.request("POST", "/s", from("198.51.100.1", { value: "5" }))).status).toBe(201);
  });

  it("anonymous links never take the token holders' free tier: 10 addresses at their caps, and a token holder still creates", async () => {
    const caps = { maxSecrets: 1000, maxBytes: 1 << 30, netMaxSecrets: 20, netMaxBytes: 1 << 20 };
    const v = buildTestVault({
      trustProxy: true,
      activeLimit: () => 100,
      share: { page: true, anonymous: true, anonymousPerMinute: 100_000, anonymousTotalPerMinute: 100_000, anonymousCaps: caps },
    });
    let made = 0;
    for (let a = 0; a < 10; a++) {
      for (let i = 0; i < 21; i++) {
        const res = await v.request("POST", "/s", { token: null, body: { value: `v${i}` }, headers: { "X-Forwarded-For": `198.51.100.${a + 1}` } });
        if (res.status === 201) made += 1;
        else {
          expect(res.status).toBe(429);
          expect(((await res.json()) as { error: string }).error).toBe("too many links made without a token");
        }
      }
    }
    // 20 per address, 200 in all: past the 100 of the free tier, which they do not take.
    expect(made).toBe(200);
    for (let i = 0; i < 100; i++) expect((await v.asMaster("POST", "/secrets", { key: `app/k${i}`, value: "x" })).status, `create ${i}`).toBe(201);
    expect((await v.asMaster("POST", "/secrets", { key: "app/k100", value: "x" })).status).toBe(402);
  });

  it("caps anonymous links per IPv6 /48, per IPv4 address, in all, by bytes and by a global rate", async () => {
    const base = { page: true, anonymous: true, anonymousPerMinute: 100_000 };
    const post = (v: TestVault, ip: string, value = "x") => v.request("POST", "/s", { token: null, body: { value }, headers: { "X-Forwarded-For": ip } });
    const byNet = buildTestVault({ trustProxy: true, share: { ...base, anonymousCaps: { maxSecrets: 5, maxBytes: 1 << 30, netMaxSecrets: 2, netMaxBytes: 1 << 20 } } });
    // Two /64s of one /48 are one network.
    expect((await post(byNet, "2001:db8:7:1::1")).status).toBe(201);
    expect((await post(byNet, "2001:db8:7:2::1")).status).toBe(201);
    expect((await post(byNet, "2001:db8:7:ffff::9")).status).toBe(429);
    expect((await post(byNet, "2001:db8:8::1")).status).toBe(201);
    expect((await post(byNet, "192.0.2.1")).status).toBe(201);
    expect((await post(byNet, "192.0.2.2")).status).toBe(201);
    // Five in all.
    expect((await post(byNet, "192.0.2.3")).status).toBe(429);
    // A read that burns one frees its place.
    const listed = (await (await byNet.asMaster("GET", "/secrets")).json()) as { secrets: Array<{ id?: string }> };
    const id = listed.secrets.find((s) => s.id !== undefined)?.id as string;
    expect((await byNet.request("POST", `/s/${id}/reveal`, { token: null })).status).toBe(200);
    expect((await post(byNet, "192.0.2.3")).status).toBe(201);

    const byBytes = buildTestVault({ trustProxy: true, share: { ...base, anonymousCaps: { maxSecrets: 1000, maxBytes: 1 << 30, netMaxSecrets: 1000, netMaxBytes: 4096 } } });
    expect((await post(byBytes, "2001:db8:9::1", "y".repeat(1500))).status).toBe(201);
    expect((await post(byBytes, "2001:db8:9::2", "y".repeat(1500))).status).toBe(201);
    expect((await post(byBytes, "2001:db8:9::3", "y".repeat(1500))).status).toBe(429);
    expect((await post(byBytes, "2001:db8:a::1", "y".repeat(1500))).status).toBe(201);

    const byRate = buildTestVault({ trustProxy: true, share: { ...base, anonymousTotalPerMinute: 3 } });
    for (let i = 0; i < 3; i++) expect((await post(byRate, `203.0.113.${i + 1}`)).status).toBe(201);
    const limited = await post(byRate, "203.0.113.50");
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toMatch(/^\d+$/);
    byRate.clock.advance(60_000);
    expect((await post(byRate, "203.0.113.50")).status).toBe(201);
  });
});

describe("the start", () => {
  afterAll(async () => {
    await killChildren();
    cleanupTemp();
  });

  it("warns that share links name the bind address when VAULT_HOST is not loopback and VAULT_PUBLIC_URL is unset", async () => {
    const open = await startVault(tempDir(), { args: ["--host", "0.0.0.0"], env: { VAULT_LOG_LEVEL: "info" } });
    await expect.poll(() => open.stdout() + open.stderr()).toMatch(/VAULT_PUBLIC_URL is not set: share links/);
    const set = await startVault(tempDir(), { args: ["--host", "0.0.0.0"], env: { VAULT_LOG_LEVEL: "info", VAULT_PUBLIC_URL: "https://vault.example.com" } });
    const local = await startVault(tempDir(), { env: { VAULT_LOG_LEVEL: "info" } });
    // The warning follows the listening line at once; give it the time it took the first vault.
    await new Promise((resolve) => setTimeout(resolve, 500));
    for (const quiet of [set, local]) expect(quiet.stdout() + quiet.stderr()).not.toMatch(/VAULT_PUBLIC_URL is not set/);
  });
});
