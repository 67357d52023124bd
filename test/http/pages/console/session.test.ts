import { describe, expect, it } from "vitest";
import { MAX_FORM_BYTES } from "../../../../src/http/pages/console/form.js";
import { SESSION_IDLE_MS, SESSION_LIMIT, SESSION_MAX_MS, SessionStore } from "../../../../src/http/pages/console/session.js";
import { buildTestVault, createKey, MASTER_KEY, TEST_ENGINE } from "../../../support/helpers.js";
import type { TestVault } from "../../../support/helpers.js";

// The console's sessions, CSRF and authorization, in process on both engines (docs/console.md).

const ORIGIN = "http://vault.test";

/** A browser stand-in: keeps the session cookie, posts forms from the vault's own origin. */
class Browser {
  cookie = "";
  constructor(readonly v: TestVault, readonly headers: Record<string, string> = {}) {}

  async get(path: string): Promise<Response> {
    return this.v.app.request(path, { headers: { ...this.headers, cookie: this.cookie } });
  }

  async post(path: string, fields: Record<string, string>, extra: Record<string, string> = { origin: ORIGIN }): Promise<Response> {
    const res = await this.v.app.request(path, {
      method: "POST",
      headers: { ...this.headers, cookie: this.cookie, "content-type": "application/x-www-form-urlencoded", ...extra },
      body: new URLSearchParams(fields).toString(),
    });
    const set = res.headers.get("set-cookie");
    if (set !== null) this.cookie = set.split(";")[0] ?? "";
    return res;
  }

  async signIn(token: string): Promise<Response> {
    return this.post("/ui/login", { token });
  }

  /** The CSRF token of the signed-in pages' forms. */
  async csrf(): Promise<string> {
    const html = await (await this.get("/ui/overview")).text();
    return /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? "";
  }
}

describe("console sessions", () => {
  it("signs in with the master key: an opaque HttpOnly SameSite=Strict cookie on Path=/ui, the token never in a page", async () => {
    const v = buildTestVault();
    const b = new Browser(v);
    expect((await b.get("/ui/overview")).headers.get("location")).toBe("../ui/login");
    const res = await b.signIn(MASTER_KEY);
    expect(res.status).toBe(303);
    const cookie = res.headers.get("set-cookie") ?? "";
    expect(cookie).toMatch(/^vault_console=[A-Za-z0-9_-]{43};/);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(cookie).toMatch(/Path=\/ui/);
    expect(cookie).not.toMatch(/Secure/);
    expect(cookie).not.toContain(MASTER_KEY);
    const page = await b.get("/ui/overview");
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).not.toContain(MASTER_KEY);
    expect(page.headers.get("content-security-policy")).toMatch(/script-src 'nonce-/);
    expect(html).toContain(">Keys<");
  });

  it("the overview counts the free tier's use over global and org secrets", async () => {
    const v = buildTestVault({ activeLimit: () => 100 });
    await v.asMaster("POST", "/secrets", { key: "a", value: "v" });
    const org = (await (await v.asMaster("POST", "/orgs", { name: "acme" })).json()) as { id: string };
    expect((await v.asMaster("POST", `/orgs/${org.id}/secrets`, { key: "b", value: "v" })).status).toBe(201);
    const b = new Browser(v);
    await b.signIn(MASTER_KEY);
    expect(await (await b.get("/ui/overview")).text()).toContain("Free tier: 2 of 100 active secrets");
  });

  it("the overview names the license's holder and the engine", async () => {
    const v = buildTestVault({ license: { holder: "ACME Corp", expiresAt: null } });
    const b = new Browser(v);
    await b.signIn(MASTER_KEY);
    const html = await (await b.get("/ui/overview")).text();
    expect(html).toContain("Licensed to ACME Corp, no expiry");
    expect(html).toContain(TEST_ENGINE === "pg" ? "PostgreSQL" : "SQLite file");
  });

  it("a form body over MAX_FORM_BYTES is refused with 413 before it is parsed", async () => {
    const v = buildTestVault();
    const res = await new Browser(v).post("/ui/login", { token: "x".repeat(MAX_FORM_BYTES + 1) });
    expect(res.status).toBe(413);
  });

  it("the cookie is Secure when the public url is https", async () => {
    const v = buildTestVault({ publicUrl: "https://vault.example" });
    const res = await new Browser(v).post("/ui/login", { token: MASTER_KEY }, { origin: "https://vault.example" });
    expect(res.headers.get("set-cookie")).toMatch(/Secure/);
  });

  it("a wrong token is refused and counts against the brute-force guard (429 past the limit)", async () => {
    const v = buildTestVault({ trustProxy: true, authFailLimit: 2 });
    const b = new Browser(v, { "x-forwarded-for": "203.0.113.9" });
    expect((await b.signIn("wrong-token-1")).status).toBe(401);
    expect((await b.signIn("wrong-token-2")).status).toBe(401);
    const blocked = await b.signIn(MASTER_KEY);
    expect(blocked.status).toBe(429);
    expect(blocked.headers.get("set-cookie")).toBeNull();
  });

  it("ends after 30 minutes idle and after 12 hours whatever the use", async () => {
    const v = buildTestVault();
    const b = new Browser(v);
    await b.signIn(MASTER_KEY);
    v.clock.advance(SESSION_IDLE_MS - 1000);
    expect((await b.get("/ui/overview")).status).toBe(200);
    v.clock.advance(SESSION_IDLE_MS);
    expect((await b.get("/ui/overview")).status).toBe(303);

    await b.signIn(MASTER_KEY);
    for (let at = 0; at < SESSION_MAX_MS - 20 * 60_000; at += 20 * 60_000) {
      v.clock.advance(20 * 60_000);
      expect((await b.get("/ui/overview")).status).toBe(200);
    }
    v.clock.advance(20 * 60_000);
    expect((await b.get("/ui/overview")).status).toBe(303);
  });

  it("keeps at most SESSION_LIMIT sessions, dropping the least recently used", () => {
    let t = 0;
    const store = new SessionStore(() => t, 3);
    const caps = { kind: "master" as const, keyId: null, permissions: [], prefix: null, orgId: null, principalId: null, role: null, letters: "" };
    const a = store.create("x", caps);
    const b = store.create("x", caps);
    t += 1;
    store.touch(a.id);
    store.create("x", caps);
    store.create("x", caps);
    expect(store.size).toBe(3);
    expect(store.touch(b.id)).toBeUndefined();
    expect(store.touch(a.id)).toBeDefined();
    expect(SESSION_LIMIT).toBeGreaterThan(0);
  });

  it("logout ends the session", async () => {
    const v = buildTestVault();
    const b = new Browser(v);
    await b.signIn(MASTER_KEY);
    const csrf = await b.csrf();
    const cookie = b.cookie;
    expect((await b.post("/ui/logout", { csrf })).status).toBe(303);
    b.cookie = cookie;
    expect((await b.get("/ui/overview")).status).toBe(303);
  });
});

describe("console CSRF", () => {
  it("a POST without the session's CSRF token, or from another origin, is refused with 403 and changes nothing", async () => {
    const v = buildTestVault();
    const b = new Browser(v);
    await b.signIn(MASTER_KEY);
    const csrf = await b.csrf();
    const fields = { key: "csrf/x", value: "v", kind: "keyed" };
    expect((await b.post("/ui/secrets/create", fields)).status).toBe(403);
    expect((await b.post("/ui/secrets/create", { ...fields, csrf: "A".repeat(43) })).status).toBe(403);
    expect((await b.post("/ui/secrets/create", { ...fields, csrf }, { origin: "http://evil.test" })).status).toBe(403);
    expect((await b.post("/ui/secrets/create", { ...fields, csrf }, { "sec-fetch-site": "cross-site" })).status).toBe(403);
    expect((await v.asMaster("GET", "/secrets/csrf%2Fx")).status).toBe(404);
    const ok = await b.post("/ui/secrets/create", { ...fields, csrf });
    expect(ok.status).toBe(303);
    expect((await v.asMaster("GET", "/secrets/csrf%2Fx")).status).toBe(200);
  });
});

describe("console authorization", () => {
  it("a read-only scoped key sees no Keys section, and /ui/keys answers the API's 403", async () => {
    const v = buildTestVault();
    const key = await createKey(v, { permissions: ["read"] });
    const b = new Browser(v);
    expect((await b.signIn(key.token)).status).toBe(303);
    const html = await (await b.get("/ui/overview")).text();
    expect(html).not.toContain(">Keys<");
    expect(html).not.toContain(key.token);
    const keys = await b.get("/ui/keys");
    expect(keys.status).toBe(403);
    expect(await keys.text()).toContain("admin");
    const csrf = await b.csrf();
    const create = await b.post("/ui/keys/create", { csrf, name: "x", perm_read: "on" });
    expect(create.status).toBe(403);
  });

  it("revoking a scoped key ends the session signed in with it", async () => {
    const v = buildTestVault();
    const key = await createKey(v, { permissions: ["admin"] });
    const b = new Browser(v);
    await b.signIn(key.token);
    expect((await b.get("/ui/keys")).status).toBe(200);
    expect((await v.asMaster("DELETE", `/keys/${key.id}`)).status).toBe(200);
    const res = await b.get("/ui/keys");
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toMatch(/ui\/login\?ended=1$/);
    expect((await b.get("/ui/overview")).status).toBe(303);
  });

  it("a revoked key ends its session even on a page that calls no other route, and page views add no audit rows", async () => {
    const v = buildTestVault();
    const key = await createKey(v, { permissions: ["read"] });
    const b = new Browser(v);
    await b.signIn(key.token);
    const rowsOf = async () => ((await (await v.asMaster("GET", `/audit?limit=1000`)).json()) as { entries: Array<{ actor: string }> }).entries.filter((e) => e.actor === key.id).length;
    const afterSignIn = await rowsOf();
    expect((await b.get("/ui/secrets")).status).toBe(200);
    expect((await b.get("/ui/secrets")).status).toBe(200);
    expect(await rowsOf()).toBe(afterSignIn);
    expect((await v.asMaster("DELETE", `/keys/${key.id}`)).status).toBe(200);
    const res = await b.get("/ui/secrets");
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toMatch(/ui\/login\?ended=1$/);
  });

  it("console actions are audited with the real actor", async () => {
    const v = buildTestVault();
    const key = await createKey(v, { permissions: ["write", "read"] });
    const b = new Browser(v);
    await b.signIn(key.token);
    const csrf = await b.csrf();
    expect((await b.post("/ui/secrets/create", { csrf, kind: "keyed", key: "aud/x", value: "v" })).status).toBe(303);
    const audit = (await (await v.asMaster("GET", "/audit?action=secret.created")).json()) as { entries: Array<{ actor: string; key: string }> };
    expect(audit.entries.find((e) => e.key === "aud/x")?.actor).toBe(key.id);
  });

  it("an unknown path outside /ui stays a JSON 404, and the metrics token cannot sign in", async () => {
    const v = buildTestVault({ metricsToken: "metrics-token-0123456789abcdef" });
    expect((await v.asMaster("GET", "/nope")).headers.get("content-type")).toMatch(/application\/json/);
    expect((await v.asMaster("GET", "/__console_probe")).status).toBe(404);
    expect((await new Browser(v).signIn("metrics-token-0123456789abcdef")).status).toBe(403);
  });
});
