import { describe, expect, it } from "vitest";
import { FailedAuthLimiter, limiterKey } from "../src/failed-auth.js";
import { buildTestVault, MASTER_KEY, itSqlite } from "./helpers.js";

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

  itSqlite("ignores an X-Forwarded-For entry that is not an IP address: it is neither stored nor counted", async () => {
    const v = buildTestVault({ trustProxy: true, authFailLimit: 2 });
    const junk = { "x-forwarded-for": "x".repeat(8000) };
    for (let i = 0; i < 3; i++) {
      expect((await v.request("GET", "/secrets", { token: "wrong", headers: junk })).status).toBe(401);
    }
    const ips = v.db.prepare("SELECT DISTINCT ip FROM audit WHERE action = 'auth.failed'").all() as { ip: string | null }[];
    expect(ips).toEqual([{ ip: null }]);
    // No socket in process: the request has no address, so nothing was counted or blocked.
    expect((await v.request("GET", "/secrets", { token: MASTER_KEY, headers: junk })).status).toBe(200);
  });
});
