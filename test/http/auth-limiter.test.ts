import { afterAll, afterEach, describe, expect, it } from "vitest";
import { DEFAULT_AUTH_FAIL_LIMIT } from "../../src/config.js";
import { FailedAuthLimiter, limiterKey } from "../../src/http/failed-auth.js";
import { cleanupTemp, E2E_MASTER_KEY, killChildren, startVault, tempDir } from "../support/e2e-helpers.js";
import { buildTestVault, MASTER_KEY, } from "../support/helpers.js";

afterEach(killChildren);
afterAll(cleanupTemp);

function limiter(options: { limit?: number; maxTracked?: number; onSharedAddress?: (key: string) => void } = {}) {
  let t = 1_000_000;
  const l = new FailedAuthLimiter({ limit: options.limit ?? 3, windowMs: 60_000, now: () => t, ...options });
  return { l, advance: (ms: number) => (t += ms) };
}

describe("the failed-authentication guard", () => {
  it("counts an IPv6 client by its /64: another address of the same /64 is blocked too", () => {
    const { l } = limiter();
    for (const host of ["1", "2", "3"]) l.fail(`2001:db8:1:2::${host}`);
    expect(l.retryAfterMs("2001:db8:1:2:ffff::9")).toBeGreaterThan(0);
    expect(l.retryAfterMs("2001:db8:1:3::1")).toBe(0);
  });

  it("counts an IPv4-mapped address as its IPv4 address", () => {
    expect(limiterKey("::ffff:192.0.2.7")).toBe("192.0.2.7");
    expect(limiterKey("192.0.2.7")).toBe("192.0.2.7");
    expect(limiterKey("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(limiterKey("not an address")).toBeNull();
  });

  it("keeps its memory bounded, dropping the oldest addresses first", () => {
    const { l, advance } = limiter({ maxTracked: 50 });
    for (let i = 0; i < 20_000; i++) {
      l.fail(`198.51.${Math.floor(i / 250)}.${i % 250}`);
      advance(1);
    }
    expect(l.size).toBeLessThanOrEqual(50);
  });

  it("warns once when an address that presented a valid token in the window gets blocked (a shared proxy address)", () => {
    const shared: string[] = [];
    const { l } = limiter({ onSharedAddress: (key) => shared.push(key) });
    l.fail("192.0.2.50");
    l.succeeded("192.0.2.50");
    l.fail("192.0.2.50");
    l.fail("192.0.2.50");
    l.fail("192.0.2.50");
    expect(shared).toEqual(["192.0.2.50"]);
    // An address with only failures is not a shared one.
    for (let i = 0; i < 4; i++) l.fail("192.0.2.51");
    expect(shared).toEqual(["192.0.2.50"]);
  });

  it("ignores an X-Forwarded-For entry that is not an IP address: it is neither stored nor counted", async () => {
    const v = buildTestVault({ trustProxy: true, authFailLimit: 2 });
    const junk = { "x-forwarded-for": "x".repeat(8000) };
    for (let i = 0; i < 3; i++) {
      expect((await v.request("GET", "/secrets", { token: "wrong", headers: junk })).status).toBe(401);
    }
    const ips = (await v.query("SELECT DISTINCT ip FROM audit WHERE action = 'auth.failed'")) as { ip: string | null }[];
    expect(ips).toEqual([{ ip: null }]);
    // No socket in process: the request has no address, so nothing was counted or blocked.
    expect((await v.request("GET", "/secrets", { token: MASTER_KEY, headers: junk })).status).toBe(200);
  });

  it("counts forwarded clients that claim loopback: X-Forwarded-For 127.0.0.1 or ::1 gets 429 after the limit", async () => {
    const v = buildTestVault({ trustProxy: true, authFailLimit: 3 });
    for (const claim of ["127.0.0.1", "::1"]) {
      const headers = { "x-forwarded-for": `203.0.113.9, ${claim}` };
      for (let i = 0; i < 3; i++) expect((await v.request("GET", "/secrets", { token: "wrong", headers })).status).toBe(401);
      const blocked = await v.request("GET", "/secrets", { token: MASTER_KEY, headers });
      expect(blocked.status, claim).toBe(429);
      expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0);
    }
  });

  it("a real server with VAULT_TRUST_PROXY: X-Forwarded-For 127.0.0.1 is blocked after VAULT_AUTH_FAIL_LIMIT (default) failures; the direct loopback peer is not", async () => {
    const vault = await startVault(tempDir(), { env: { VAULT_TRUST_PROXY: "true" } });
    const get = (token: string, headers: Record<string, string>) =>
      fetch(`${vault.url}/secrets`, { headers: { authorization: `Bearer ${token}`, ...headers } });
    const claim = { "x-forwarded-for": "127.0.0.1" };
    for (let i = 0; i < DEFAULT_AUTH_FAIL_LIMIT; i++) expect((await get("wrong-token", claim)).status).toBe(401);
    expect((await get("wrong-token", claim)).status).toBe(429);
    expect((await get(E2E_MASTER_KEY, claim)).status).toBe(429);
    // The vault's own machine, connecting directly (no forwarded entry), is never counted.
    for (let i = 0; i < DEFAULT_AUTH_FAIL_LIMIT + 2; i++) expect((await get("wrong-token", {})).status).toBe(401);
  });
});

describe("requests without a credential", () => {
  it("never lock an address out: 20+ GETs without Authorization and 20+ share misses leave the master key served", async () => {
    const v = buildTestVault({ trustProxy: true, authFailLimit: 3 });
    const headers = { "x-forwarded-for": "203.0.113.77" };
    // What any web page can make a browser send: API GETs without a header, and share links that name nothing.
    for (let i = 0; i < 25; i++) expect((await v.request("GET", "/secrets", { token: null, headers })).status).toBe(401);
    for (let i = 0; i < 25; i++) {
      const miss = await v.request("GET", `/s/junk${i}`, { token: null, headers });
      expect([404, 429]).toContain(miss.status);
    }
    expect((await v.request("GET", "/s/junk", { token: null, headers })).status).toBe(429);
    // The API's guard counted none of them: the master key is served from the same address.
    expect((await v.request("GET", "/secrets", { token: MASTER_KEY, headers })).status).toBe(200);
    // A wrong credential still counts: 3 of them block the address.
    for (let i = 0; i < 3; i++) expect((await v.request("GET", "/secrets", { token: "wrong-token", headers })).status).toBe(401);
    expect((await v.request("GET", "/secrets", { token: MASTER_KEY, headers })).status).toBe(429);
  });

  it("a refused share request never makes the API refuse: share misses have their own limiter", async () => {
    const v = buildTestVault({ trustProxy: true, authFailLimit: 2 });
    const headers = { "x-forwarded-for": "2001:db8:5:6::9" };
    for (let i = 0; i < 4; i++) await v.request("POST", `/s/${"c".repeat(64)}/reveal`, { token: null, headers });
    expect((await v.request("POST", `/s/${"c".repeat(64)}/reveal`, { token: null, headers })).status).toBe(429);
    const made = await v.request("POST", "/secrets", { token: MASTER_KEY, headers, body: { value: "still served" } });
    expect(made.status).toBe(201);
  });
});
