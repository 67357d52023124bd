
import { describe, expect, it } from "vitest";
import { FailedAuthLimiter } from "../../../src/http/failed-auth.js";
import { buildTestVault, createKey, MASTER_KEY } from "../../support/helpers.js";
import { actions, entries } from "../../support/audit-helpers.js";

// The brute-force guard's audit rows and the actor of webhook changes, on both engines (docs/audit.md).

describe("brute-force guard", () => {
  const from = (ip: string) => ({ "x-forwarded-for": ip });

  it("never counts a direct loopback peer, but counts loopback that only X-Forwarded-For claims", async () => {
    for (const ip of ["127.0.0.1", "::1", "::ffff:127.0.0.1"]) {
      const v = buildTestVault({ trustProxy: true });
      const direct = new FailedAuthLimiter({ limit: 20, windowMs: 60_000, now: v.clock.now });
      for (let i = 0; i < 30; i++) direct.fail(ip, false);
      expect(direct.retryAfterMs(ip, false), ip).toBe(0);
      for (let i = 0; i < 20; i++) {
        expect((await v.request("GET", "/secrets", { token: `wrong-${i}`, headers: from(ip) })).status).toBe(401);
      }
      expect((await v.request("GET", "/secrets", { token: MASTER_KEY, headers: from(ip) })).status, ip).toBe(429);
    }
  });

  it("is on by default for remote clients: the 21st request after 20 failures gets 429", async () => {
    const v = buildTestVault({ trustProxy: true });
    for (let i = 0; i < 20; i++) {
      expect((await v.request("GET", "/secrets", { token: `wrong-${i}`, headers: from("192.0.2.9") })).status).toBe(401);
    }
    expect((await v.request("GET", "/secrets", { token: MASTER_KEY, headers: from("192.0.2.9") })).status).toBe(429);
  });

  it("counts the address the trusted proxy saw, not what the client wrote before it", async () => {
    const v = buildTestVault({ trustProxy: true, authFailLimit: 2 });
    for (let i = 0; i < 2; i++) {
      const spoofed = { "x-forwarded-for": `127.0.0.${i + 1}, 192.0.2.10` };
      expect((await v.request("GET", "/secrets", { token: "wrong", headers: spoofed })).status).toBe(401);
    }
    expect((await v.request("GET", "/secrets", { token: "wrong", headers: from("192.0.2.10") })).status).toBe(429);
  });

  it("answers 429 with Retry-After after VAULT_AUTH_FAIL_LIMIT=20 failed authentications from one ip in 60 s, until the window passes", async () => {
    const v = buildTestVault({ trustProxy: true, authFailLimit: 20 });
    for (let i = 0; i < 20; i++) {
      v.clock.advance(1_000);
      expect((await v.request("GET", "/secrets", { token: `wrong-${i}`, headers: from("192.0.2.1") })).status).toBe(401);
    }
    const blocked = await v.request("GET", "/secrets", { token: MASTER_KEY, headers: from("192.0.2.1") });
    expect(blocked.status).toBe(429);
    expect(blocked.headers.get("retry-after")).toBe("41");
    expect(await blocked.json()).toMatchObject({ error: "too many failed authentications" });

    // Another address is not affected.
    expect((await v.request("GET", "/secrets", { token: MASTER_KEY, headers: from("192.0.2.2") })).status).toBe(200);

    v.clock.advance(40_000);
    expect((await v.request("GET", "/secrets", { token: MASTER_KEY, headers: from("192.0.2.1") })).status).toBe(429);
    v.clock.advance(1_000);
    expect((await v.request("GET", "/secrets", { token: MASTER_KEY, headers: from("192.0.2.1") })).status).toBe(200);
  });

  it("does not block an ip whose failures are spread over more than the window", async () => {
    const v = buildTestVault({ trustProxy: true, authFailLimit: 20 });
    for (let i = 0; i < 40; i++) {
      v.clock.advance(4_000);
      expect((await v.request("GET", "/secrets", { token: "wrong", headers: from("192.0.2.3") })).status).toBe(401);
    }
  });

  it("follows VAULT_AUTH_FAIL_LIMIT and VAULT_AUTH_FAIL_WINDOW_MS, and records no row for a 429", async () => {
    const v = buildTestVault({ trustProxy: true, authFailLimit: 2, authFailWindowMs: 5_000 });
    await v.request("GET", "/secrets", { token: "wrong", headers: from("192.0.2.4") });
    await v.request("GET", "/secrets", { token: "wrong", headers: from("192.0.2.4") });
    const blocked = await v.request("GET", "/secrets", { token: "wrong", headers: from("192.0.2.4") });
    expect(blocked.status).toBe(429);
    expect(blocked.headers.get("retry-after")).toBe("5");
    expect(await actions(v)).toEqual(["auth.failed", "auth.failed"]);
    v.clock.advance(5_000);
    expect((await v.request("GET", "/secrets", { token: "wrong", headers: from("192.0.2.4") })).status).toBe(401);
  });

  it("leaves /health open to a blocked ip", async () => {
    const v = buildTestVault({ trustProxy: true, authFailLimit: 1 });
    await v.request("GET", "/secrets", { token: "wrong", headers: from("192.0.2.5") });
    expect((await v.request("GET", "/secrets", { headers: from("192.0.2.5") })).status).toBe(429);
    expect((await v.request("GET", "/health", { token: null, headers: from("192.0.2.5") })).status).toBe(200);
  });
});

describe("webhook changes made with a scoped key", () => {
  it("leave exactly one audit row each, with the key as actor", async () => {
    const v = buildTestVault({ webhooks: { allowPrivate: true } });
    const admin = await createKey(v, { permissions: ["admin"] });
    const res = await v.request("POST", "/webhooks", {
      token: admin.token,
      body: { url: "https://127.0.0.1:9/hook", events: ["*"] },
    });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    const rows = (await entries(v)).filter((e) => e.actor === admin.id);
    expect(rows.map((e) => [e.action, e.key])).toEqual([["webhook.created", id]]);
  });
});
