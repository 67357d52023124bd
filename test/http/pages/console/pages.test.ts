import { describe, expect, it } from "vitest";
import { sealEnvelope } from "@ephemeral-vault/client";
import { buildTestVault, createKey, MASTER_KEY } from "../../../support/helpers.js";
import type { TestVault } from "../../../support/helpers.js";

// The console's secrets, keys and audit pages in process on both engines (docs/console.md):
// share links marked and never revealed, delete behind a confirm page, durations, the
// per-secret page, search and sort, the audit filter's message, and <!DOCTYPE html> on every page.

const ORIGIN = "http://vault.test";

class Browser {
  cookie = "";
  constructor(readonly v: TestVault) {}
  async get(path: string): Promise<Response> {
    return this.v.app.request(path, { headers: { cookie: this.cookie } });
  }
  async html(path: string): Promise<string> {
    const res = await this.get(path);
    expect(res.status, path).toBe(200);
    return res.text();
  }
  async post(path: string, fields: Record<string, string>): Promise<Response> {
    const res = await this.v.app.request(path, {
      method: "POST",
      headers: { cookie: this.cookie, "content-type": "application/x-www-form-urlencoded", origin: ORIGIN },
      body: new URLSearchParams(fields).toString(),
    });
    const set = res.headers.get("set-cookie");
    if (set !== null) this.cookie = set.split(";")[0] ?? "";
    return res;
  }
  async signIn(token: string): Promise<this> {
    expect((await this.post("/ui/login", { token })).status).toBe(303);
    return this;
  }
  async csrf(): Promise<string> {
    return /name="csrf" value="([^"]+)"/.exec(await this.html("/ui/overview"))?.[1] ?? "";
  }
}

async function publicSecret(v: TestVault, body: Record<string, unknown> = {}): Promise<string> {
  const res = await v.asMaster("POST", "/secrets", Object.assign({ value: "envelope-or-not", max_reads: 2 }, body));
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

const readCount = async (v: TestVault, name: string) =>
  ((await (await v.asMaster("GET", "/secrets")).json()) as { secrets: Array<{ key?: string; id?: string; read_count: number }> }).secrets.find((s) => (s.key ?? s.id) === name)?.read_count;

describe("console share links", () => {
  it("a public secret is marked, has no Reveal, says what its holder can do and offers Delete", async () => {
    const v = buildTestVault();
    const id = await publicSecret(v);
    expect((await v.asMaster("POST", "/secrets", { key: "plain/one", value: "v" })).status).toBe(201);
    const b = await new Browser(v).signIn(MASTER_KEY);
    const html = await b.html("/ui/secrets");
    const row = html.slice(html.indexOf(id), html.indexOf("</tr>", html.indexOf(id)));
    expect(row).toMatch(/>public</);
    expect(row).not.toContain("secrets/reveal");
    expect(row).toContain("can open it 2 more time");
    expect(row).toContain(`secrets/delete?key=${id}`);
    const keyed = html.slice(html.indexOf("plain/one"), html.indexOf("</tr>", html.indexOf("plain/one")));
    expect(keyed).toContain("keyed");
    expect(keyed).toContain("secrets/reveal?key=plain%2Fone");
  });

  it("the console never spends a share link's read, even when its reveal is posted by hand", async () => {
    const v = buildTestVault();
    const id = await publicSecret(v);
    const b = await new Browser(v).signIn(MASTER_KEY);
    expect((await b.get(`/ui/secrets/reveal?key=${id}`)).status).toBe(403);
    const csrf = await b.csrf();
    const res = await b.post("/ui/secrets/reveal", { csrf, key: id });
    expect(res.status).toBe(403);
    expect(await res.text()).not.toContain("envelope-or-not");
    expect(await readCount(v, id)).toBe(0);
  });
});

/** An end-to-end link as the create page and `share` make it: an envelope and its reveal check. */
async function endToEndLink(v: TestVault): Promise<string> {
  const sealed = await sealEnvelope("the value", {});
  return publicSecret(v, { value: sealed.envelope, reveal_check: sealed.revealCheck });
}

describe("console end-to-end links", () => {
  it("tells an end-to-end link (a reveal check) from a plain public secret in the list and on its page", async () => {
    const v = buildTestVault();
    const plain = await publicSecret(v);
    const e2e = await endToEndLink(v);
    const b = await new Browser(v).signIn(MASTER_KEY);
    const html = await b.html("/ui/secrets");
    const rowOf = (id: string) => html.slice(html.lastIndexOf("<tr", html.indexOf(id)), html.indexOf("</tr>", html.indexOf(id)));
    expect(rowOf(e2e)).toContain("end-to-end link");
    expect(rowOf(plain)).toMatch(/>public</);
    expect(rowOf(plain)).not.toContain("end-to-end");
    for (const id of [plain, e2e]) {
      expect(rowOf(id)).not.toContain("secrets/reveal");
      expect(rowOf(id)).toContain("can open it 2 more time");
    }
    expect(html).toContain("Neither kind of link is revealed here");

    const e2ePage = await b.html(`/ui/secrets/view?key=${e2e}`);
    expect(e2ePage).toMatch(/<dt>Kind<\/dt>\s*<dd>end-to-end link<\/dd>/);
    expect(e2ePage).toContain("the vault holds only ciphertext, and the recipient page spends a read only for the link&#39;s proof");
    expect(e2ePage).not.toContain("secrets/reveal");
    const plainPage = await b.html(`/ui/secrets/view?key=${plain}`);
    expect(plainPage).toMatch(/<dt>Kind<\/dt>\s*<dd>public<\/dd>/);
    expect(plainPage).toContain("its reads belong to whoever holds its link");
    expect(plainPage).not.toContain("only ciphertext");
    // Neither page spent a read.
    expect(await readCount(v, e2e)).toBe(0);
    expect(await readCount(v, plain)).toBe(0);
  });

  it("an end-to-end link whose reveal check is gone (pruned) is shown as public", async () => {
    const v = buildTestVault();
    const e2e = await endToEndLink(v);
    await v.query(`DELETE FROM reveal_checks WHERE key = '${e2e}'`);
    const b = await new Browser(v).signIn(MASTER_KEY);
    const html = await b.html("/ui/secrets");
    const row = html.slice(html.lastIndexOf("<tr", html.indexOf(e2e)), html.indexOf("</tr>", html.indexOf(e2e)));
    expect(row).toMatch(/>public</);
  });
});

describe("console delete", () => {
  it("Delete is a confirm page; only its POST deletes", async () => {
    const v = buildTestVault();
    expect((await v.asMaster("POST", "/secrets", { key: "del/me", value: "v" })).status).toBe(201);
    const b = await new Browser(v).signIn(MASTER_KEY);
    const confirm = await b.html("/ui/secrets/delete?key=del%2Fme");
    expect(confirm).toContain("This cannot be undone");
    expect(confirm).toMatch(/<form method="post" action="[./]*ui\/secrets\/delete">/);
    expect(confirm).toContain('name="csrf"');
    expect((await v.asMaster("HEAD", "/secrets/del%2Fme")).status).toBe(200);
    const csrf = await b.csrf();
    expect((await b.post("/ui/secrets/delete", { csrf, key: "del/me" })).status).toBe(303);
    expect((await v.asMaster("HEAD", "/secrets/del%2Fme")).status).toBe(404);
  });
});

describe("console durations", () => {
  it("TTL fields take 90s, 2h, 7d; a bad one says so and creates nothing; a key's expiry is a duration", async () => {
    const v = buildTestVault();
    const b = await new Browser(v).signIn(MASTER_KEY);
    const csrf = await b.csrf();
    const now = Math.floor(v.clock.now() / 1000);
    expect((await b.post("/ui/secrets/create", { csrf, kind: "keyed", key: "ttl/a", value: "v", ttl: "2h" })).status).toBe(303);
    const listed = ((await (await v.asMaster("GET", "/secrets")).json()) as { secrets: Array<{ key: string; expires_at: number }> }).secrets;
    expect((listed.find((s) => s.key === "ttl/a")?.expires_at ?? 0) - now).toBe(7200);
    expect((await b.post("/ui/secrets/patch", { csrf, key: "ttl/a", ttl: "7d" })).status).toBe(303);
    const patched = ((await (await v.asMaster("GET", "/secrets")).json()) as { secrets: Array<{ key: string; expires_at: number }> }).secrets;
    expect((patched.find((s) => s.key === "ttl/a")?.expires_at ?? 0) - now).toBe(7 * 86_400);
    expect((await b.post("/ui/secrets/create", { csrf, kind: "keyed", key: "ttl/b", value: "v", ttl: "tomorrow" })).status).toBe(303);
    expect(await b.html("/ui/secrets")).toContain("&quot;tomorrow&quot; is not a duration");
    expect((await v.asMaster("HEAD", "/secrets/ttl%2Fb")).status).toBe(404);

    expect((await b.post("/ui/keys/create", { csrf, name: "short-lived", perm_read: "on", expires_in: "90s" })).status).toBe(303);
    const keys = ((await (await v.asMaster("GET", "/keys")).json()) as { keys: Array<{ name: string; expires_at: number | null }> }).keys;
    expect((keys.find((k) => k.name === "short-lived")?.expires_at ?? 0) - now).toBe(90);
  });
});

describe("console secrets list and per-secret page", () => {
  it("searches by substring and sorts by key, created, expiry and reads", async () => {
    const v = buildTestVault();
    for (const [key, ttl] of [["b/alpha", 300], ["a/beta", 100], ["c/gamma", 200]] as const) {
      expect((await v.asMaster("POST", "/secrets", { key, value: "v", ttl_seconds: ttl })).status).toBe(201);
      v.clock.advance(1000);
    }
    await v.asMaster("GET", "/secrets/c%2Fgamma");
    await v.asMaster("GET", "/secrets/c%2Fgamma");
    await v.asMaster("GET", "/secrets/a%2Fbeta");
    const b = await new Browser(v).signIn(MASTER_KEY);
    const order = (html: string) => [...html.matchAll(/<th scope="row"[^>]*>([^<]+)<\/th>/g)].map((m) => m[1]);
    expect(order(await b.html("/ui/secrets?sort=key&dir=asc"))).toEqual(["a/beta", "b/alpha", "c/gamma"]);
    expect(order(await b.html("/ui/secrets?sort=created&dir=asc"))).toEqual(["b/alpha", "a/beta", "c/gamma"]);
    expect(order(await b.html("/ui/secrets"))).toEqual(["c/gamma", "a/beta", "b/alpha"]);
    expect(order(await b.html("/ui/secrets?sort=expires&dir=asc"))).toEqual(["a/beta", "c/gamma", "b/alpha"]);
    expect(order(await b.html("/ui/secrets?sort=reads&dir=desc"))).toEqual(["c/gamma", "a/beta", "b/alpha"]);
    expect(order(await b.html("/ui/secrets?q=et"))).toEqual(["a/beta"]);
    expect(order(await b.html("/ui/secrets?q=a%2F"))).toEqual(["a/beta"]);
    expect(await b.html("/ui/secrets?sort=bogus")).toContain("is not a sort order");
  });

  it("the create form is above the list; each row links to its page", async () => {
    const v = buildTestVault();
    expect((await v.asMaster("POST", "/secrets", { key: "x/one", value: "v" })).status).toBe(201);
    const html = await (await new Browser(v).signIn(MASTER_KEY)).html("/ui/secrets");
    expect(html.indexOf("Create a secret")).toBeLessThan(html.indexOf("<table"));
    expect(html).toContain("secrets/view?key=x%2Fone");
  });

  it("a secret's page: metadata, reads left, whether the next read destroys it, who read it when and from where", async () => {
    const v = buildTestVault({ trustProxy: true });
    expect((await v.asMaster("POST", "/secrets", { key: "app/db", value: "v", max_reads: 2 })).status).toBe(201);
    const reader = await createKey(v, { name: "reader", permissions: ["read"] });
    const read = await v.app.request("/secrets/app%2Fdb", { headers: { authorization: `Bearer ${reader.token}`, "x-forwarded-for": "198.51.100.7" } });
    expect(read.status).toBe(200);
    const b = await new Browser(v).signIn(MASTER_KEY);
    const html = await b.html("/ui/secrets/view?key=app%2Fdb");
    expect(html).toContain("Reads left</dt><dd>1</dd>");
    expect(html).toContain("destroys it (its last read)");
    const history = html.slice(html.indexOf("History"));
    expect(history).toContain("secret.read");
    expect(history).toContain(reader.id);
    expect(history).toContain("198.51.100.7");
    expect(history).toContain("secret.created");
    expect(await readCount(v, "app/db")).toBe(1);
    expect((await b.get("/ui/secrets/view?key=nope")).status).toBe(404);
  });

  it("a prefix-scoped admin key sees only its prefix, in the list and on a secret's page", async () => {
    const v = buildTestVault();
    for (const key of ["team/a", "other/b"]) expect((await v.asMaster("POST", "/secrets", { key, value: "v" })).status).toBe(201);
    const admin = await createKey(v, { permissions: ["admin"], prefix: "team/" });
    const b = await new Browser(v).signIn(admin.token);
    const list = await b.html("/ui/secrets");
    expect(list).toContain("team/a");
    expect(list).not.toContain("other/b");
    expect((await b.get("/ui/secrets/view?key=other%2Fb")).status).toBe(404);
    expect(await b.html("/ui/secrets/view?key=team%2Fa")).toContain("secret.created");
  });
});

describe("console audit filter", () => {
  it("since=yesterday answers 400 with a message and lists nothing; since=2h filters", async () => {
    const v = buildTestVault();
    expect((await v.asMaster("POST", "/secrets", { key: "old/one", value: "v" })).status).toBe(201);
    v.clock.advance(3 * 3600_000);
    expect((await v.asMaster("POST", "/secrets", { key: "new/one", value: "v" })).status).toBe(201);
    const b = await new Browser(v).signIn(MASTER_KEY);
    const bad = await b.get("/ui/audit?since=yesterday");
    expect(bad.status).toBe(400);
    const html = await bad.text();
    expect(html).toContain("&quot;yesterday&quot; is not a time");
    expect(html).not.toContain("old/one");
    expect((await b.get("/ui/audit/export?since=yesterday")).status).toBe(400);
    const recent = await b.html("/ui/audit?since=2h");
    expect(recent).toContain("new/one");
    expect(recent).not.toContain("old/one");
  });
});

describe("every page is a standards-mode document", () => {
  it("starts with <!DOCTYPE html>: the console's pages, sign-in, messages, and the share and create pages", async () => {
    const v = buildTestVault();
    const id = await publicSecret(v);
    expect((await v.asMaster("POST", "/secrets", { key: "dt/one", value: "v" })).status).toBe(201);
    const anonymous = new Browser(v);
    const pages: Array<[string, Response]> = [
      ["/ui/login", await anonymous.get("/ui/login")],
      ["/", await anonymous.get("/")],
      [`/s/${id}`, await anonymous.get(`/s/${id}`)],
      ["/s/unknown", await anonymous.get("/s/unknown")],
      ["/ui/nope", await anonymous.get("/ui/nope")],
    ];
    const b = await new Browser(v).signIn(MASTER_KEY);
    for (const path of ["overview", "secrets", "secrets/view?key=dt%2Fone", "secrets/reveal?key=dt%2Fone", "secrets/delete?key=dt%2Fone", "audit", "audit?since=bad", "keys", "orgs", "webhooks", "keys/none"]) {
      pages.push([`/ui/${path}`, await b.get(`/ui/${path}`)]);
    }
    const org = (await (await v.asMaster("POST", "/orgs", { name: "dt" })).json()) as { id: string };
    pages.push([`/ui/orgs/view?id=${org.id}`, await b.get(`/ui/orgs/view?id=${org.id}`)]);
    const forged = await v.app.request("/ui/secrets/create", { method: "POST", headers: { origin: "http://evil.test", "content-type": "application/x-www-form-urlencoded" }, body: "" });
    pages.push(["forged POST", forged]);
    for (const [path, res] of pages) {
      expect(res.headers.get("content-type") ?? "", path).toMatch(/text\/html/);
      expect((await res.text()).startsWith("<!DOCTYPE html>"), path).toBe(true);
    }
  });
});
