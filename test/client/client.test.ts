import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseShareLink, VaultApiError, VaultClient, VaultConnectionError, VaultProtocolError } from "@ephemeral-vault/client";
import { E2E_MASTER_KEY, cleanupTemp, killChildren, startVault, tempDir } from "../support/e2e-helpers.js";
import { rejection } from "../support/helpers.js";
import type { VaultProcess } from "../support/e2e-helpers.js";

/**
 * VaultClient against a real server process (the built bin): every secret
 * verb, the error classes, and a pass over keys, audit, webhooks, orgs and /me.
 */

let vault: VaultProcess;
let client: VaultClient;

beforeAll(async () => {
  vault = await startVault(tempDir(), { env: { VAULT_WEBHOOK_ALLOW_PRIVATE: "true" } });
  client = new VaultClient({ addr: vault.url, token: E2E_MASTER_KEY });
});
afterAll(async () => {
  await killChildren();
  cleanupTemp();
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

describe("secret verbs", () => {
  it("put/get round-trips newlines, unicode byte for byte, under a key whose segments need encoding", async () => {
    const value = "line one\nline two\r\n\ttabbed  \u00e9\u00e8 \u65e5\u672c\u8a9e \ud83d\udd10 \"quoted\" \\ back\n\n";
    expect(await client.put("app/db:url+v=1@prod~x", value)).toEqual({ key: "app/db:url+v=1@prod~x" });
    const read = await client.get("app/db:url+v=1@prod~x");
    expect(read.value).toBe(value);
    expect(Buffer.from(read.value, "utf8").equals(Buffer.from(value, "utf8"))).toBe(true);
    expect(read).toMatchObject({ key: "app/db:url+v=1@prod~x", read_count: 1, max_reads: null });
  });

  it("burns after maxReads 1: the first get returns the value, the next is a 404 VaultApiError", async () => {
    await client.put("burn/once", "only once", { maxReads: 1, ttlSeconds: 600 });
    expect(await client.exists("burn/once")).toBe(true);
    expect((await client.get("burn/once")).value).toBe("only once");
    const err = await rejection(client.get("burn/once"));
    expect(err).toBeInstanceOf(VaultApiError);
    expect(err).toMatchObject({ status: 404, error: expect.any(String) });
    expect(await client.exists("burn/once")).toBe(false);
  });

  it("exists() counts no read", async () => {
    await client.put("exists/one", "v", { maxReads: 1 });
    expect(await client.exists("exists/one")).toBe(true);
    expect(await client.exists("exists/one")).toBe(true);
    expect((await client.get("exists/one")).value).toBe("v");
  });

  it("list gives metadata only, filters by prefix and pages with cursor", async () => {
    await client.put("list/a", "secret-a");
    await client.put("list/b", "secret-b");
    await client.put("other/c", "secret-c");
    const page = await client.list({ prefix: "list/" });
    expect(page.secrets.map((s) => s.key)).toEqual(["list/a", "list/b"]);
    expect(JSON.stringify(page)).not.toContain("secret-a");
    const first = await client.list({ limit: 1 });
    expect(first.secrets).toHaveLength(1);
    expect(typeof first.next_cursor).toBe("string");
    const second = await client.list({ limit: 1, cursor: first.next_cursor });
    expect(second.secrets[0]?.key).not.toBe(first.secrets[0]?.key);
  });

  it("patch sets a new read limit and TTL; delete removes", async () => {
    await client.put("patch/me", "p");
    expect(await client.patch("patch/me", { maxReads: 1, ttlSeconds: 300 })).toEqual({ key: "patch/me", updated: true });
    const meta = (await client.list({ prefix: "patch/" })).secrets[0];
    expect(meta).toMatchObject({ key: "patch/me", max_reads: 1 });
    expect(typeof meta?.expires_at).toBe("number");
    expect(await client.delete("patch/me")).toEqual({ deleted: true });
    expect(await client.exists("patch/me")).toBe(false);
    expect(await rejection(client.delete("patch/me"))).toMatchObject({ status: 404 });
  });

  it("share --plain makes a public dead drop: {id, url}, readable once by id", async () => {
    const shared = await client.share("drop it", { maxReads: 1, plain: true });
    expect(shared.id).toMatch(/^[0-9a-f]{64}$/);
    expect(shared.url).toMatch(new RegExp(`/s/${shared.id}$`));
    expect((await client.get(shared.id)).value).toBe("drop it");
    expect(await client.exists(shared.id)).toBe(false);
  });

  it("share encrypts end to end: the vault holds an envelope, open(url) reads it once", async () => {
    const shared = await client.share("drop it ✓\n", { maxReads: 1 });
    expect(shared.url).toMatch(new RegExp(`/s/${shared.id}#[A-Za-z0-9_-]{43}$`));
    expect(await client.open(shared.url)).toBe("drop it ✓\n");
    expect(await rejection(client.open(shared.url))).toMatchObject({ status: 404 });
    const locked = await client.share("with a passphrase", { passphrase: "correct horse" });
    expect(locked.url).toMatch(/#[A-Za-z0-9_-]{43}\.p$/);
    expect(parseShareLink(locked.url)).toMatchObject({ id: locked.id, kind: "page", needsPassphrase: true });
    expect(await rejection(client.open(locked.url))).toMatchObject({ reason: "passphrase" });
    // The reveal proof (docs/share.md): a wrong passphrase is refused by the vault before any read.
    expect(await rejection(client.open(locked.url, { passphrase: "wrong horse" }))).toMatchObject({ reason: "passphrase", readSpent: false });
    expect(await client.open(locked.url, { passphrase: "correct horse" })).toBe("with a passphrase");
  });

  it("share with maxFailedReveals burns the secret after that many refused proofs, unread", async () => {
    const shared = await client.share("fragile", { maxFailedReveals: 2 });
    const forged = `${shared.url.split("#")[0]}#${"A".repeat(43)}`;
    for (let i = 0; i < 2; i++) expect(await rejection(client.open(forged))).toMatchObject({ reason: "key", readSpent: false });
    expect(await rejection(client.open(shared.url))).toMatchObject({ status: 404 });
    expect(await rejection(client.open(`${shared.url.slice(0, -2)}`))).toMatchObject({ reason: "key", readSpent: false });
  });

  it("seal without an org is refused before any request", async () => {
    await expect(client.put("x", "y", { seal: true })).rejects.toThrow(/org secrets only/);
    expect(await client.exists("x")).toBe(false);
  });
});

describe("errors", () => {
  it("401 is a VaultApiError with status and error; exists() throws it too", async () => {
    const bad = new VaultClient({ addr: vault.url, token: "not-a-token" });
    const err = await rejection(bad.get("anything"));
    expect(err).toBeInstanceOf(VaultApiError);
    expect(err).toMatchObject({ status: 401, error: expect.any(String) });
    expect((err as VaultApiError).message.length).toBeGreaterThan(0);
    expect(await rejection(bad.exists("anything"))).toMatchObject({ status: 401 });
    expect(await new VaultClient({ addr: vault.url }).health()).toEqual({ status: "ok" });
  });

  it("message is the body's message when it has one, else its error; a non-JSON body is a VaultProtocolError", async () => {
    const bodies = [
      new Response(JSON.stringify({ error: "payment required", message: "free tier limit of 100 active secrets" }), {
        status: 402,
        headers: { "content-type": "application/json" },
      }),
      new Response("<html>bad gateway</html>", { status: 502, statusText: "Bad Gateway", headers: { "content-type": "text/html" } }),
    ];
    const fake = new VaultClient({ addr: "http://fake", token: "t", fetch: async () => bodies.shift() ?? new Response(null, { status: 500 }) });
    expect(await rejection(fake.put("k", "v"))).toMatchObject({
      status: 402,
      error: "payment required",
      message: "free tier limit of 100 active secrets",
      request: "POST /secrets",
    });
    // Not the vault's JSON error body: another server answered (a proxy's error page), not the vault.
    const page = await rejection(fake.get("a/b"));
    expect(page).toBeInstanceOf(VaultProtocolError);
    expect(page).toMatchObject({ status: 502, contentType: "text/html", request: "GET /secrets/a/b", message: "the server at http://fake is not an ephemeral-vault (HTTP 502, text/html)" });
  });

  it("409 on a duplicate key carries the body's error", async () => {
    await client.put("dup", "1");
    const err = await rejection(client.put("dup", "2"));
    expect(err).toMatchObject({ status: 409, name: "VaultApiError" });
    expect((err as VaultApiError).error).not.toBe("");
  });

  it("an unreachable vault is a VaultConnectionError naming the address", async () => {
    const addr = `http://127.0.0.1:${await closedPort()}`;
    const err = await rejection(new VaultClient({ addr, token: "t" }).get("k"));
    expect(err).toBeInstanceOf(VaultConnectionError);
    expect(err).not.toBeInstanceOf(VaultApiError);
    expect((err as VaultConnectionError).addr).toBe(addr);
    expect((err as Error).message).toContain(addr);
  });
});

describe("connection defaults", () => {
  it("addr, token and org come from VAULT_ADDR, VAULT_TOKEN and VAULT_ORG; org null opts out", async () => {
    const seen: Array<{ url: string; auth: string | undefined }> = [];
    const fetch = async (url: string, init?: RequestInit) => {
      seen.push({ url, auth: (init?.headers as Record<string, string> | undefined)?.Authorization });
      return new Response(JSON.stringify({ key: "k", value: "v" }), { status: 200, headers: { "content-type": "application/json" } });
    };
    const saved = { addr: process.env.VAULT_ADDR, token: process.env.VAULT_TOKEN, org: process.env.VAULT_ORG };
    let defaultAddr = "";
    process.env.VAULT_ADDR = "http://vault.example:9000/";
    process.env.VAULT_TOKEN = "env-token";
    process.env.VAULT_ORG = "org_1";
    try {
      await new VaultClient({ fetch }).get("a b/c");
      await new VaultClient({ fetch, org: null, token: "flag-token", addr: "http://other:1" }).get("k");
      delete process.env.VAULT_ADDR;
      defaultAddr = new VaultClient({ fetch }).addr;
    } finally {
      for (const [name, value] of [["VAULT_ADDR", saved.addr], ["VAULT_TOKEN", saved.token], ["VAULT_ORG", saved.org]] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
    expect(seen).toEqual([
      { url: "http://vault.example:9000/orgs/org_1/secrets/a%20b/c", auth: "Bearer env-token" },
      { url: "http://other:1/secrets/k", auth: "Bearer flag-token" },
    ]);
    expect(defaultAddr).toBe("http://127.0.0.1:8484");
  });
});

describe("resource groups", () => {
  it("keys: create, a scoped client limited to its prefix, list, delete (then 401)", async () => {
    const created = await client.keys.create({ name: "ci", permissions: ["read", "write"], prefix: "ci/" });
    expect(created.token).toEqual(expect.any(String));
    const scoped = new VaultClient({ addr: vault.url, token: created.token });
    await scoped.put("ci/token", "scoped value");
    expect((await scoped.get("ci/token")).value).toBe("scoped value");
    expect(await rejection(scoped.put("elsewhere", "v"))).toMatchObject({ status: 403 });
    const listed = await client.keys.list();
    expect(listed.keys.map((k) => k.id)).toContain(created.id);
    expect(JSON.stringify(listed)).not.toContain(created.token);
    expect(await client.keys.delete(created.id)).toEqual({ deleted: true });
    expect(await rejection(scoped.get("ci/token"))).toMatchObject({ status: 401 });
  });

  it("audit: entries filtered by action and key, never values", async () => {
    await client.put("audited", "audit-me-not");
    await client.get("audited");
    const page = await client.audit.list({ action: "secret.read", key: "audited", limit: 10 });
    expect(page.entries.length).toBeGreaterThanOrEqual(1);
    expect(page.entries.every((e) => e.action === "secret.read" && e.key === "audited")).toBe(true);
    expect(JSON.stringify(page)).not.toContain("audit-me-not");
  });

  it("webhooks: create, list, rotate, deliveries, delete", async () => {
    const hook = await client.webhooks.create({ url: "https://127.0.0.1:9/hook", events: ["secret.created"], description: "t" });
    expect(hook).toMatchObject({ url: "https://127.0.0.1:9/hook", events: ["secret.created"] });
    expect(hook.secret).toMatch(/^whsec_/);
    const rotated = await client.webhooks.rotate(hook.id);
    expect(rotated.id).toBe(hook.id);
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(hook.secret);
    expect((await client.webhooks.list()).webhooks.map((w) => w.id)).toContain(hook.id);
    expect(Array.isArray((await client.webhooks.deliveries(hook.id)).deliveries)).toBe(true);
    expect(await client.webhooks.delete(hook.id)).toEqual({ deleted: true });
    expect(await rejection(client.webhooks.deliveries(hook.id))).toMatchObject({ status: 404 });
  });

  it("orgs, roles, principals, principal keys, /me and org secrets (seal, exists, prune, audit)", async () => {
    const org = await client.orgs.create({ name: "acme" });
    expect((await client.orgs.get(org.id)).name).toBe("acme");
    expect((await client.orgs.list()).orgs.map((o) => o.id)).toContain(org.id);
    const acme = client.orgs.of(org.id);
    await acme.roles.create({ name: "auditor", permissions: "la" });
    expect((await acme.roles.list()).roles.map((r) => r.name)).toEqual(expect.arrayContaining(["owner", "auditor"]));
    expect(await acme.roles.update("auditor", { permissions: "lar" })).toMatchObject({ name: "auditor" });
    const bot = await acme.principals.create({ name: "bot", role: "owner" });
    expect((await acme.principals.get(bot.id)).role).toBe("owner");
    expect(await acme.principals.update(bot.id, { metadata: { team: "ops" } })).toMatchObject({ id: bot.id });
    expect((await acme.principals.list()).principals.map((p) => p.id)).toContain(bot.id);
    const key = await acme.principals.createKey(bot.id, { name: "k1" });

    const asBot = new VaultClient({ addr: vault.url, token: key.key, org: org.id });
    const me = await asBot.me.get();
    expect(me).toMatchObject({ id: bot.id, org_id: org.id, metadata: { team: "ops" } });
    expect(await asBot.me.update({ metadata: { team: "sre" } })).toMatchObject({ metadata: { team: "sre" } });
    const second = await asBot.me.createKey({ name: "k2" });
    expect((await asBot.me.listKeys()).keys.map((k) => k.id)).toEqual(expect.arrayContaining([key.id, second.id]));
    expect(await asBot.me.deleteKey(second.id)).toEqual({ deleted: true });

    await asBot.put("db/url", "postgres://org\nsecret \u2603", { maxReads: 1, seal: true });
    expect(await asBot.exists("db/url")).toBe(true);
    expect((await asBot.list()).secrets.map((s) => s.key)).toEqual(["db/url"]);
    expect((await asBot.get("db/url")).value).toBe("postgres://org\nsecret \u2603");
    expect(await rejection(asBot.get("db/url"))).toMatchObject({ status: 410 });
    expect(await asBot.patch("db/url", { maxReads: 2 })).toMatchObject({ key: "db/url", updated: true });
    expect((await asBot.get("db/url")).value).toBe("postgres://org\nsecret \u2603");
    expect(await asBot.delete("db/url")).toEqual({ deleted: true });
    expect(await asBot.exists("db/url")).toBe(false);
    expect(await asBot.prune()).toEqual({ pruned: expect.any(Number) });
    expect(await asBot.orgs.of(org.id).prune()).toEqual({ pruned: 0 });
    const audit = await asBot.orgs.of(org.id).audit({ key: "db/url" });
    expect(audit.entries.map((e) => e.action)).toEqual(expect.arrayContaining(["secret.created", "secret.read"]));
    expect(await rejection(client.me.get())).toMatchObject({ status: 403 });

    const orgHook = await acme.webhooks.create({ url: "https://127.0.0.1:9/org", events: ["*"] });
    expect((await acme.webhooks.list()).webhooks.map((w) => w.id)).toEqual([orgHook.id]);
    expect((await acme.webhooks.rotate(orgHook.id)).secret).toMatch(/^whsec_/);
    expect(await acme.webhooks.delete(orgHook.id)).toEqual({ deleted: true });

    expect(await acme.principals.deleteKey(bot.id, key.id)).toEqual({ deleted: true });
    expect(await rejection(asBot.me.get())).toMatchObject({ status: 401 });
    expect(await acme.principals.delete(bot.id)).toEqual({ deleted: true });
    expect(await acme.roles.delete("auditor")).toEqual({ deleted: true });
    expect(await client.orgs.delete(org.id)).toEqual({ deleted: true });
  });

  it("prune and health", async () => {
    expect(await client.prune()).toEqual({ pruned: expect.any(Number) });
    expect(await client.health()).toMatchObject({ status: "ok" });
  });
});
