import { describe, expect, it } from "vitest";
import { AuthFailureCoalescer, INDIVIDUAL_AUTH_FAILURES } from "../../src/http/failed-auth.js";
import { buildTestVault, } from "../support/helpers.js";

function coalescer(options: { maxTracked?: number } = {}) {
  let t = 1_000_000;
  const c = new AuthFailureCoalescer({ windowMs: 60_000, now: () => t, individual: 3, ...options });
  return { c, advance: (ms: number) => (t += ms) };
}

describe("coalescing repeated auth.failed rows", () => {
  it("gives the first failures of a window a row each and counts the rest toward one summary", () => {
    const { c, advance } = coalescer();
    const admitted = Array.from({ length: 7 }, () => c.admit("192.0.2.9").record);
    expect(admitted).toEqual([true, true, true, false, false, false, false]);
    expect(c.drain()).toEqual([]); // the window is still open
    advance(60_000);
    expect(c.drain()).toEqual([{ ip: "192.0.2.9", count: 4 }]);
    expect(c.drain()).toEqual([]);
    expect(c.size).toBe(0);
  });

  it("hands over a closed window's summary with the next failure from that address", () => {
    const { c, advance } = coalescer();
    for (let i = 0; i < 5; i++) c.admit("192.0.2.9");
    advance(60_000);
    expect(c.admit("192.0.2.9")).toEqual({ record: true, closed: { ip: "192.0.2.9", count: 2 } });
    expect(c.drain(true)).toEqual([]);
  });

  it("groups an IPv6 /64 as the brute-force guard does, and never coalesces loopback or unknown addresses", () => {
    const { c } = coalescer();
    for (let i = 1; i <= 5; i++) c.admit(`2001:db8:1:2::${i}`);
    expect(c.drain(true)).toEqual([{ ip: "2001:db8:1:2::5", count: 2 }]);
    for (const ip of ["127.0.0.1", "::1", null]) {
      for (let i = 0; i < 10; i++) expect(c.admit(ip).record).toBe(true);
    }
    expect(c.drain(true)).toEqual([]);
  });

  it("coalesces a loopback address that a trusted proxy forwarded (X-Forwarded-For), unlike a direct loopback peer", () => {
    const { c } = coalescer();
    const forwarded = Array.from({ length: 5 }, () => c.admit("127.0.0.1", true).record);
    expect(forwarded).toEqual([true, true, true, false, false]);
    for (let i = 0; i < 5; i++) expect(c.admit("127.0.0.1", false).record).toBe(true);
  });

  it("keeps its memory bounded without losing a count", () => {
    const { c } = coalescer({ maxTracked: 10 });
    for (let a = 0; a < 100; a++) for (let i = 0; i < 4; i++) c.admit(`198.51.100.${a}`);
    expect(c.size).toBeLessThanOrEqual(10);
    const summaries = c.drain(true);
    expect(summaries.reduce((n, s) => n + s.count, 0)).toBe(100);
  });

  it("writes INDIVIDUAL_AUTH_FAILURES rows, then one row with the count, and the chain still verifies", async () => {
    const v = buildTestVault({ trustProxy: true });
    const from = { "x-forwarded-for": "203.0.113.7" };
    const n = INDIVIDUAL_AUTH_FAILURES + 5;
    for (let i = 0; i < n; i++) {
      expect((await v.request("GET", "/secrets", { token: "wrong", headers: from })).status).toBe(401);
    }
    const rows = async () =>
      (await v.query("SELECT ip, count FROM audit WHERE action = 'auth.failed' ORDER BY id")) as { ip: string; count: number | null }[];
    expect(await rows()).toHaveLength(INDIVIDUAL_AUTH_FAILURES);
    expect(await v.flushAuthFailures()).toBe(0); // window still open
    v.clock.advance(60_000);
    expect(await v.flushAuthFailures()).toBe(1);
    expect((await rows()).slice(INDIVIDUAL_AUTH_FAILURES)).toEqual([{ ip: "203.0.113.7", count: 5 }]);
    // every failed request is accounted for
    const entries = ((await (await v.asMaster("GET", "/audit?action=auth.failed&limit=100")).json()) as { entries: { count: number; ip: string }[] }).entries;
    expect(entries.reduce((total, e) => total + e.count, 0)).toBe(n);
    expect(entries[0]).toEqual({ id: expect.any(String), timestamp: expect.any(Number), action: "auth.failed", key: null, actor: null, ip: "203.0.113.7", count: 5 });
    expect(await v.engine.verifyAudit(v.cipher.auditChainKeys())).toMatchObject({ ok: true });
  });

  it("leaves other entries' shape unchanged", async () => {
    const v = buildTestVault();
    await v.asMaster("POST", "/secrets", { key: "k", value: "v" });
    const entries = ((await (await v.asMaster("GET", "/audit")).json()) as { entries: Record<string, unknown>[] }).entries;
    expect(Object.keys(entries[0] ?? {}).sort()).toEqual(["action", "actor", "id", "ip", "key", "timestamp"]);
  });
});
