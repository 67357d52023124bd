import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { VaultApiError, VaultClient, VaultConnectionError } from "@ephemeral-vault/client";
import type { FetchLike } from "@ephemeral-vault/client";
import { BIN, E2E_MASTER_KEY, ROOT, childEnv, cleanupTemp, killChildren, startVault, tempDir } from "../support/e2e-helpers.js";
import { startFaultProxy } from "../support/fault-proxy.js";
import type { FaultProxy } from "../support/fault-proxy.js";
import { rejection } from "../support/helpers.js";
import type { VaultProcess } from "../support/e2e-helpers.js";

/**
 * VaultClient's retries (docs/client.md, "Retries") against a real vault
 * process behind a fault-injecting proxy: the vault handles each request
 * fully, then the proxy loses the answer (a 503, or a destroyed socket) for
 * the first attempts. A keyed call's retry gets the first answer again
 * (Idempotency-Key, docs/api.md "Retries"); a write without a key is not
 * sent twice; the attempts are bounded.
 */

let vault: VaultProcess;
let proxy: FaultProxy;
/** Straight to the vault, for the facts after a test's calls. */
let direct: VaultClient;
/** Through the proxy, with short waits. */
let client: VaultClient;

const FAST = { attempts: 4, baseDelayMs: 5, maxDelayMs: 2_000 };

beforeAll(async () => {
  vault = await startVault(tempDir(), { env: { VAULT_WEBHOOK_ALLOW_PRIVATE: "true" } });
  proxy = await startFaultProxy(vault.url);
  direct = new VaultClient({ addr: vault.url, token: E2E_MASTER_KEY, org: null, retry: false });
  client = new VaultClient({ addr: proxy.url, token: E2E_MASTER_KEY, org: null, retry: FAST });
});
afterAll(async () => {
  await proxy.close();
  await killChildren();
  cleanupTemp();
});
beforeEach(() => proxy.plan({ match: () => false }));

/** How many audit entries of `action` name `key`. */
async function audited(action: string, key: string): Promise<number> {
  const page = (await direct.audit.list({ action, key, limit: 1000 })) as { entries: unknown[] };
  return page.entries.length;
}

/** The CLI run to its end without blocking this process (the proxy runs in it). */
function cli(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: childEnv(env), stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (s: string) => (stdout += s));
    child.stderr.setEncoding("utf8").on("data", (s: string) => (stderr += s));
    const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe("keyed calls: a lost answer is retried with the same Idempotency-Key", () => {
  it("a create whose 201 was lost to a 503 gets that 201 on retry (a replay), not 409; one secret, one create audited", async () => {
    proxy.plan({ match: (m, p) => m === "POST" && p === "/secrets", faults: ["503"] });
    expect(await client.put("retry/create", "created once")).toEqual({ key: "retry/create" });
    const [first, second] = proxy.forwarded;
    expect(proxy.forwarded).toHaveLength(2);
    expect(first).toMatchObject({ status: 201, fault: "503", replayed: undefined });
    expect(second).toMatchObject({ status: 201, fault: undefined, replayed: "true" });
    expect(first?.idempotencyKey).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(second?.idempotencyKey).toBe(first?.idempotencyKey);
    const listed = (await direct.list({ prefix: "retry/create" })).secrets;
    expect(listed.map((s) => s.key)).toEqual(["retry/create"]);
    expect(await audited("secret.created", "retry/create")).toBe(1);
    expect((await direct.get("retry/create")).value).toBe("created once");
  });

  it("a create whose connection was reset after the vault made it is retried and answered 201", async () => {
    proxy.plan({ match: (m, p) => m === "POST" && p === "/secrets", faults: ["reset", "reset"] });
    expect(await client.put("retry/reset", "v")).toEqual({ key: "retry/reset" });
    expect(proxy.forwarded.map((f) => [f.status, f.fault, f.replayed])).toEqual([
      [201, "reset", undefined],
      [201, "reset", "true"],
      [201, undefined, "true"],
    ]);
    expect(new Set(proxy.forwarded.map((f) => f.idempotencyKey)).size).toBe(1);
    expect(await audited("secret.created", "retry/reset")).toBe(1);
  });

  it("each logical call sends a key of its own", async () => {
    proxy.plan({ match: (m) => m === "POST", faults: [] });
    await client.put("retry/own-1", "a");
    await client.put("retry/own-2", "b");
    const keys = proxy.forwarded.map((f) => f.idempotencyKey);
    expect(keys).toHaveLength(2);
    expect(keys[0]).not.toBe(keys[1]);
  });

  it("a one-read secret's read whose answer was lost still returns the value on retry (not 404); burned once", async () => {
    await direct.put("retry/once", "read me once", { maxReads: 1 });
    proxy.plan({ match: (m, p) => m === "GET" && p === "/secrets/retry/once", faults: ["503"] });
    const read = await client.get("retry/once");
    expect(read).toMatchObject({ key: "retry/once", value: "read me once", read_count: 1 });
    expect(proxy.forwarded.map((f) => [f.status, f.fault, f.replayed])).toEqual([
      [200, "503", undefined],
      [200, undefined, "true"],
    ]);
    expect(await rejection(direct.get("retry/once"))).toMatchObject({ status: 404 });
    expect(await audited("secret.read", "retry/once")).toBe(1);
  });

  it("the same after a reset connection", async () => {
    await direct.put("retry/once-reset", "still here", { maxReads: 1 });
    proxy.plan({ match: (m, p) => m === "GET" && p.startsWith("/secrets/retry/"), faults: ["reset"] });
    expect((await client.get("retry/once-reset")).value).toBe("still here");
    expect(proxy.forwarded).toHaveLength(2);
    expect(await direct.exists("retry/once-reset")).toBe(false);
    expect(await audited("secret.read", "retry/once-reset")).toBe(1);
  });

  it("the same when the answer's body is cut off half way", async () => {
    await direct.put("retry/once-cut", "half a body", { maxReads: 1 });
    proxy.plan({ match: (m, p) => m === "GET" && p.startsWith("/secrets/retry/"), faults: ["cut"] });
    expect((await client.get("retry/once-cut")).value).toBe("half a body");
    expect(proxy.forwarded.map((f) => [f.fault, f.replayed])).toEqual([
      ["cut", undefined],
      [undefined, "true"],
    ]);
    expect(await direct.exists("retry/once-cut")).toBe(false);
  });

  it("a share link's reveal (POST /s/<id>/reveal) whose answer was lost returns the value on retry; burned once", async () => {
    const shared = await direct.share("the shared value", { maxReads: 1 });
    const link = shared.url.replace(/^https?:\/\/[^/]+/, proxy.url);
    proxy.plan({ match: (m, p) => m === "POST" && p.endsWith("/reveal"), faults: ["503", "reset"] });
    expect(await client.open(link)).toBe("the shared value");
    expect(proxy.forwarded.map((f) => [f.path, f.status, f.fault, f.replayed])).toEqual([
      [`/s/${shared.id}/reveal`, 200, "503", undefined],
      [`/s/${shared.id}/reveal`, 200, "reset", "true"],
      [`/s/${shared.id}/reveal`, 200, undefined, "true"],
    ]);
    expect(new Set(proxy.forwarded.map((f) => f.idempotencyKey)).size).toBe(1);
    expect(await rejection(direct.open(shared.url))).toMatchObject({ status: 404 });
    expect((await direct.receipt(shared.receipt)).readCount).toBe(1);
  });

  it("org secrets alike: put, replace, patch, get and delete each answered once across a lost answer", async () => {
    const org = await direct.orgs.create({ name: "retries" });
    const bot = await direct.orgs.of(org.id).principals.create({ name: "bot", role: "owner" });
    const key = await direct.orgs.of(org.id).principals.createKey(bot.id, { name: "k" });
    const asBot = new VaultClient({ addr: proxy.url, token: key.key, org: org.id, retry: FAST });
    const base = `/orgs/${org.id}/secrets`;
    proxy.plan({ match: (m, p) => p.startsWith(base), faults: ["503", null, "reset", null, "503", null, "reset", null, "503", null, "reset"] });
    expect(await asBot.put("org/db", "first", { maxReads: 5, seal: true })).toEqual({ key: "org/db" });
    expect(await asBot.replace("org/db", "second", { maxReads: 5, seal: true })).toEqual({ key: "org/db", updated: true });
    expect(await asBot.patch("org/db", { maxReads: 1 })).toMatchObject({ key: "org/db", updated: true });
    expect((await asBot.get("org/db")).value).toBe("second");
    await asBot.put("org/gone", "x");
    expect(await asBot.delete("org/gone")).toEqual({ deleted: true });
    // Each call: its first answer lost, then the replay of it.
    const calls = proxy.forwarded.map((f) => `${f.method} ${f.status} ${f.fault ?? "-"} ${f.replayed ?? "-"}`);
    expect(calls).toEqual([
      "POST 201 503 -",
      "POST 201 - true",
      "PUT 200 reset -",
      "PUT 200 - true",
      "PATCH 200 503 -",
      "PATCH 200 - true",
      "GET 200 reset -",
      "GET 200 - true",
      "POST 201 503 -",
      "POST 201 - true",
      "DELETE 200 reset -",
      "DELETE 200 - true",
    ]);
    // The one-read (sealing) secret was read once: sealed now, not readable a second time.
    const plain = new VaultClient({ addr: vault.url, token: key.key, org: org.id, retry: false });
    expect(await rejection(plain.get("org/db"))).toMatchObject({ status: 410 });
    expect(await plain.exists("org/gone")).toBe(false);
  });

  it("the CLI's get of a one-read secret through the proxy prints the value once, exit 0", async () => {
    await direct.put("retry/cli", "cli value", { maxReads: 1 });
    proxy.plan({ match: (m, p) => m === "GET" && p === "/secrets/retry/cli", faults: ["503"] });
    const run = await cli(["get", "retry/cli"], { VAULT_ADDR: proxy.url, VAULT_TOKEN: E2E_MASTER_KEY });
    expect(run).toEqual({ code: 0, stdout: "cli value", stderr: "" });
    expect(proxy.forwarded).toHaveLength(2);
    expect(proxy.forwarded[1]?.replayed).toBe("true");
    expect(await direct.exists("retry/cli")).toBe(false);
  });
});

describe("calls the vault keeps no key for", () => {
  it("a request (POST /requests) answered 503 is not sent again, and carries no key", async () => {
    proxy.plan({ match: (m, p) => m === "POST" && p === "/requests", faults: ["503"] });
    const err = await rejection(client.request({ description: "not twice" }));
    expect(err).toBeInstanceOf(VaultApiError);
    expect(err).toMatchObject({ status: 503 });
    expect(proxy.forwarded).toHaveLength(1);
    expect(proxy.forwarded[0]?.idempotencyKey).toBeUndefined();
  });

  it("a webhook create whose connection was reset is not sent again", async () => {
    proxy.plan({ match: (m, p) => m === "POST" && p === "/webhooks", faults: ["reset"] });
    const err = await rejection(client.webhooks.create({ url: "http://127.0.0.1:9/hook", events: ["secret.created"] }));
    expect(err).toBeInstanceOf(VaultConnectionError);
    expect(proxy.forwarded).toHaveLength(1);
  });

  it("a write whose connection was refused (nothing sent) is tried again, up to the attempts", async () => {
    const port = await closedPort();
    let calls = 0;
    const counting: FetchLike = (input, init) => {
      calls++;
      return fetch(input, init);
    };
    const refused = new VaultClient({ addr: `http://127.0.0.1:${port}`, token: E2E_MASTER_KEY, org: null, fetch: counting, retry: { attempts: 3, baseDelayMs: 1 } });
    const err = await rejection(refused.request({ description: "nowhere" }));
    expect(err).toBeInstanceOf(VaultConnectionError);
    expect(calls).toBe(3);
  });

  it("a list (GET, no change) answered 503 is retried", async () => {
    proxy.plan({ match: (m, p) => m === "GET" && p.startsWith("/webhooks"), faults: ["503", "reset"] });
    const page = await client.webhooks.list();
    expect(Array.isArray((page as { webhooks: unknown[] }).webhooks)).toBe(true);
    expect(proxy.forwarded).toHaveLength(3);
    expect(proxy.forwarded[0]?.idempotencyKey).toBeUndefined();
  });
});

describe("the bound", () => {
  it("a proxy that always answers 503 makes the client give up with the 503 after the configured attempts, one key throughout", async () => {
    proxy.plan({ match: (m, p) => m === "POST" && p === "/secrets", always: "503" });
    const bounded = new VaultClient({ addr: proxy.url, token: E2E_MASTER_KEY, org: null, retry: { attempts: 3, baseDelayMs: 1, maxDelayMs: 10 } });
    const err = await rejection(bounded.put("retry/bound", "v"));
    expect(err).toBeInstanceOf(VaultApiError);
    expect(err).toMatchObject({ status: 503, error: "the database is unavailable" });
    expect(proxy.forwarded).toHaveLength(3);
    expect(proxy.forwarded.map((f) => f.replayed)).toEqual([undefined, "true", "true"]);
    expect(new Set(proxy.forwarded.map((f) => f.idempotencyKey)).size).toBe(1);
    // The vault made it once, on the first attempt.
    expect(await audited("secret.created", "retry/bound")).toBe(1);
  });

  it("retry: false sends once, with no key", async () => {
    proxy.plan({ match: (m, p) => m === "GET" && p === "/secrets/retry/off", always: "503" });
    await direct.put("retry/off", "v");
    const off = new VaultClient({ addr: proxy.url, token: E2E_MASTER_KEY, org: null, retry: false });
    expect(await rejection(off.get("retry/off"))).toMatchObject({ status: 503 });
    expect(proxy.forwarded).toHaveLength(1);
    expect(proxy.forwarded[0]?.idempotencyKey).toBeUndefined();
  });

  it("a Retry-After longer than maxDelayMs ends the retries: one attempt, its 503 (retryAfter set)", async () => {
    proxy.plan({ match: (m, p) => m === "POST" && p === "/secrets", always: "503", retryAfter: 30 });
    const err = await rejection(client.put("retry/after", "v"));
    expect(err).toMatchObject({ status: 503, retryAfter: 30 });
    expect(proxy.forwarded).toHaveLength(1);
  });

  it("the call's timeoutMs bounds the attempts and their waits together", async () => {
    proxy.plan({ match: (m, p) => m === "POST" && p === "/secrets", always: "503", retryAfter: 1 });
    const slow = new VaultClient({ addr: proxy.url, token: E2E_MASTER_KEY, org: null, timeoutMs: 1_500, retry: { attempts: 10, maxDelayMs: 5_000 } });
    const err = await rejection(slow.put("retry/deadline", "v"));
    expect(err).toMatchObject({ status: 503 });
    // A wait of 1 s fits once in 1.5 s (not at all when the first attempt took over half a second), never twice.
    expect(proxy.forwarded.length).toBeGreaterThanOrEqual(1);
    expect(proxy.forwarded.length).toBeLessThanOrEqual(2);
  });

  it("the caller's abort during a wait between attempts rejects with the signal's reason, and nothing more is sent", async () => {
    proxy.plan({ match: (m, p) => m === "POST" && p === "/secrets", always: "503", retryAfter: 2 });
    const controller = new AbortController();
    const abortable = new VaultClient({ addr: proxy.url, token: E2E_MASTER_KEY, org: null, signal: controller.signal, retry: { attempts: 5, maxDelayMs: 5_000 } });
    const reason = new Error("stop now");
    const pending = rejection(abortable.put("retry/abort", "v"));
    setTimeout(() => controller.abort(reason), 300);
    expect(await pending).toBe(reason);
    expect(proxy.forwarded.length).toBeLessThanOrEqual(1);
  });

  it("an option out of range is a RangeError", () => {
    expect(() => new VaultClient({ retry: { attempts: 0 } })).toThrow(RangeError);
    expect(() => new VaultClient({ retry: { attempts: 1.5 } })).toThrow(RangeError);
    expect(() => new VaultClient({ retry: { baseDelayMs: -1 } })).toThrow(RangeError);
  });
});

/** A TCP port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}
