import { generateKeyPairSync } from "node:crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { buildTestVault, fakeClock, MASTER_KEY } from "../../support/helpers.js";
import type { FakeClock, TestVault } from "../../support/helpers.js";
import { createOrg, expectStatus } from "../../support/org-helpers.js";
import { CookieFetch, loginAtIdp, startTestIdp } from "../../support/oidc-provider.js";
import type { TestIdp } from "../../support/oidc-provider.js";
import type { OidcSettings } from "../../../src/http/sso/oidc.js";

// Console sign-in with OpenID Connect, in process on both engines against a real
// provider (oidc-provider on loopback, test/support/oidc-provider.ts): the first
// sign-in makes the principal with the mapped role, a later one follows the
// provider's groups, a person without a mapped group is refused, and forged or
// replayed callbacks (state, nonce, another client's code, an expired ID token)
// are refused with a page and a `signin.refused` row, changing nothing (docs/sso.md).

const VAULT = "http://vault.test";

interface OrgEntry {
  action: string;
  key: string | null;
  actor: string | null;
  principal_id?: string | null;
}

describe("console sign-in with OpenID Connect", () => {
  let idp: TestIdp;
  let v: TestVault;
  let clock: FakeClock;
  let orgId: string;
  let settings: OidcSettings;

  beforeAll(async () => {
    idp = await startTestIdp(
      {
        alice: { email: "alice@example.com", name: "Alice", groups: ["vault-admins", "devs"] },
        bob: { email: "bob@example.com", name: "Bob", groups: ["devs"] },
        carol: { email: "carol@example.com", name: "Carol", groups: ["sales"] },
      },
      [`${VAULT}/ui/oidc/callback`],
    );
  });
  afterAll(async () => {
    await idp?.close();
  });
  beforeEach(async () => {
    clock = fakeClock(Date.now());
    settings = {
      issuer: idp.issuer,
      clientId: idp.clientId,
      clientSecret: idp.clientSecret,
      scopes: "openid profile email groups",
      roleClaim: "groups",
      orgId: "",
      roleMap: [
        { group: "vault-admins", role: "admin" },
        { group: "devs", role: "writer" },
      ],
      keyTtlSeconds: 3600,
    };
    v = buildTestVault({ now: clock.now, oidc: settings });
    orgId = await createOrg(v);
    settings.orgId = orgId;
    idp.setIdTokenTtl(300);
  });

  /** GET on the vault with the jar's cookies, keeping the answer's. */
  async function vaultGet(jar: CookieFetch, url: string): Promise<Response> {
    const res = await v.app.request(url, { headers: { cookie: jar.cookieFor(VAULT) } });
    jar.keep(VAULT, res);
    return res;
  }

  /** Starts a sign-in at the vault: the provider's authorization URL. */
  async function start(jar: CookieFetch): Promise<string> {
    const res = await vaultGet(jar, `${VAULT}/ui/oidc/login`);
    expect(res.status).toBe(303);
    const location = res.headers.get("location") ?? "";
    expect(location.startsWith(`${idp.issuer}/auth?`)).toBe(true);
    return location;
  }

  /** A whole sign-in of `login`; `tamper` may change the authorization URL first. */
  async function signIn(login: string, tamper: (url: URL) => void = () => {}, jar = new CookieFetch()): Promise<{ jar: CookieFetch; res: Response; html: string; callback: string }> {
    const url = new URL(await start(jar));
    tamper(url);
    const callback = await loginAtIdp(jar, idp, url.href, login);
    expect(callback.startsWith(`${VAULT}/ui/oidc/callback?`), callback).toBe(true);
    const res = await vaultGet(jar, callback);
    return { jar, res, html: await res.text(), callback };
  }

  // The org log's rows as stored: the API's org entries name the principal, not the actor (docs/contract.md §11).
  const orgLog = async (): Promise<OrgEntry[]> =>
    (await v.query("SELECT action, key, actor, principal_id FROM audit WHERE scope = ? ORDER BY id", orgId)) as unknown as OrgEntry[];
  const principals = async () => (await expectStatus(v.asMaster("GET", `/orgs/${orgId}/principals`), 200)).principals as Array<{ id: string; name: string; role: string }>;

  it("the sign-in page offers the provider; the first sign-in makes the principal with the mapped role, audited as the provider's subject", async () => {
    const page = await (await v.app.request(`${VAULT}/ui/login`)).text();
    expect(page).toContain(`Sign in with ${new URL(idp.issuer).host}`);
    expect(page).toContain('href="../ui/oidc/login"');

    const { jar, res, html } = await signIn("alice");
    expect(res.status, html).toBe(200);
    expect(html).toContain("alice@example.com");
    expect(html).toContain("role admin");
    expect(html).toMatch(/http-equiv="refresh"/);
    const [alice, ...others] = await principals();
    expect(others).toEqual([]);
    expect(alice).toMatchObject({ name: "alice@example.com", role: "admin" });
    const log = await orgLog();
    const created = log.find((e) => e.action === "principal.created");
    expect(created).toMatchObject({ key: alice?.id, actor: "oidc:sub-alice" });
    expect(log.find((e) => e.action === "key.created")).toMatchObject({ actor: "oidc:sub-alice", principal_id: alice?.id });
    // The console session acts as that principal.
    const overview = await vaultGet(jar, `${VAULT}/ui/overview`);
    expect(overview.status).toBe(200);
    expect(await overview.text()).toContain(`Signed in with single sign-on as alice@example.com, org ${orgId} (role admin)`);
    // Its key lives at most VAULT_OIDC_KEY_TTL.
    const keys = (await expectStatus(v.asMaster("GET", `/orgs/${orgId}/principals/${alice?.id}/keys`), 200)).keys as Array<{ name: string; valid_before: number | null }>;
    expect(keys).toHaveLength(1);
    expect(keys[0]?.name).toBe("console sign-in");
    expect(keys[0]?.valid_before).toBe(Math.floor((clock.now() + 3600_000) / 1000));
  });

  it("a later sign-in takes the role the provider's groups give now (principal.updated), the same principal", async () => {
    await signIn("bob");
    const [first] = await principals();
    expect(first?.role).toBe("writer");
    idp.setGroups("bob", ["vault-admins"]);
    const again = await signIn("bob");
    expect(again.res.status, again.html).toBe(200);
    const [second, ...none] = await principals();
    expect(none).toEqual([]);
    expect(second).toMatchObject({ id: first?.id, role: "admin" });
    expect((await orgLog()).filter((e) => e.action === "principal.updated")).toMatchObject([{ key: first?.id, actor: "oidc:sub-bob" }]);
    // Removed from every mapped group: refused at the next sign-in; the principal stays, its role untouched.
    idp.setGroups("bob", ["sales"]);
    const refused = await signIn("bob");
    expect(refused.res.status).toBe(403);
    expect(refused.html).toContain("none of the groups");
    expect((await orgLog()).at(-1)).toMatchObject({ action: "signin.refused", key: "no_role", actor: "oidc:sub-bob" });
    idp.setGroups("bob", ["devs"]);
  });

  it("a person whose groups map to no role is refused: a page, a signin.refused row, no principal, no session", async () => {
    const { jar, res, html } = await signIn("carol");
    expect(res.status).toBe(403);
    expect(html).toContain("Sign-in refused");
    expect(await principals()).toEqual([]);
    expect((await orgLog()).map((e) => [e.action, e.key, e.actor])).toEqual([["signin.refused", "no_role", "oidc:sub-carol"]]);
    const overview = await vaultGet(jar, `${VAULT}/ui/overview`);
    expect(overview.status).toBe(303);
  });

  const refusedWith = async (reason: string, res: Response, html: string) => {
    expect(res.status, html).toBe(403);
    expect(html).toContain(`data-refused="${reason}"`);
    expect(await principals()).toEqual([]);
    expect((await orgLog()).map((e) => [e.action, e.key, e.actor])).toEqual([["signin.refused", reason, null]]);
  };

  it("a callback whose state is not the browser's sign-in's is refused", async () => {
    const jar = new CookieFetch();
    const callback = new URL(await loginAtIdp(jar, idp, await start(jar), "alice"));
    callback.searchParams.set("state", "forged-state");
    const res = await vaultGet(jar, callback.href);
    await refusedWith("state", res, await res.text());
  });

  it("a callback from another browser (no sign-in waiting in it) is refused, and a replayed one too", async () => {
    const jar = new CookieFetch();
    const callback = await loginAtIdp(jar, idp, await start(jar), "alice");
    const elsewhere = await v.app.request(callback);
    await refusedWith("state", elsewhere, await elsewhere.text());
    // The first use in its own browser signs in; the same answer again is refused.
    const first = await vaultGet(jar, callback);
    expect(first.status).toBe(200);
    const replay = await vaultGet(jar, callback);
    expect(replay.status).toBe(403);
    expect(await replay.text()).toContain('data-refused="state"');
  });

  it("an ID token whose nonce is not the sign-in's is refused", async () => {
    const { res, html } = await signIn("alice", (url) => url.searchParams.set("nonce", "another-nonce"));
    await refusedWith("nonce", res, html);
  });

  it("a code issued to another client (another audience) is refused", async () => {
    const { res, html } = await signIn("alice", (url) => url.searchParams.set("client_id", idp.otherClientId));
    await refusedWith("provider", res, html);
  });

  it("an ID token expired by the vault's clock is refused", async () => {
    idp.setIdTokenTtl(60);
    const jar = new CookieFetch();
    const callback = await loginAtIdp(jar, idp, await start(jar), "alice");
    clock.advance(5 * 60_000);
    const res = await vaultGet(jar, callback);
    await refusedWith("expired", res, await res.text());
  });

  it("an ID token whose signature does not verify against the provider's published keys is refused", async () => {
    // The same key ids with other key material: the provider's tokens no longer verify against what it publishes.
    const own = (await (await fetch(`${idp.issuer}/jwks`)).json()) as { keys: Array<Record<string, string>> };
    const forged = own.keys.map((k) => {
      const other =
        k.kty === "RSA"
          ? generateKeyPairSync("rsa", { modulusLength: 2048 }).publicKey
          : k.kty === "EC"
            ? generateKeyPairSync("ec", { namedCurve: k.crv ?? "P-256" }).publicKey
            : generateKeyPairSync("ed25519").publicKey;
      const { n, e, x, y } = other.export({ format: "jwk" });
      return Object.assign({}, k, n === undefined ? {} : { n, e }, x === undefined ? {} : { x }, y === undefined ? {} : { y });
    });
    expect(forged.length).toBeGreaterThan(0);
    idp.publishKeys({ keys: forged });
    try {
      const { res, html } = await signIn("alice");
      await refusedWith("signature", res, html);
    } finally {
      idp.publishKeys(undefined);
    }
  });

  it("an operator revokes a person at once from the console: every key goes, the person's session ends at its next request", async () => {
    const person = await signIn("alice");
    expect((await vaultGet(person.jar, `${VAULT}/ui/overview`)).status).toBe(200);
    const [alice] = await principals();
    const operator = new CookieFetch();
    const login = await v.app.request(`${VAULT}/ui/login`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: VAULT },
      body: new URLSearchParams({ token: MASTER_KEY }).toString(),
    });
    operator.keep(VAULT, login);
    const page = await (await vaultGet(operator, `${VAULT}/ui/orgs/view?id=${orgId}`)).text();
    expect(page).toContain("Revoke every key: alice@example.com");
    const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? "";
    const revoke = await v.app.request(`${VAULT}/ui/orgs/principal-revoke`, {
      method: "POST",
      headers: { cookie: operator.cookieFor(VAULT), "content-type": "application/x-www-form-urlencoded", origin: VAULT },
      body: new URLSearchParams({ csrf, org: orgId, principal: alice?.id ?? "", name: "alice@example.com" }).toString(),
    });
    expect(revoke.status).toBe(303);
    expect((await expectStatus(v.asMaster("GET", `/orgs/${orgId}/principals/${alice?.id}/keys`), 200)).keys).toEqual([]);
    const after = await vaultGet(person.jar, `${VAULT}/ui/overview`);
    expect(after.status).toBe(303);
    expect(after.headers.get("location")).toContain("login?ended=1");
  });

  it("at most 20 sign-ins started per address per minute: then 429 with Retry-After, nothing kept for it", async () => {
    const jar = new CookieFetch();
    for (let i = 0; i < 20; i++) await start(jar);
    const over = await vaultGet(jar, `${VAULT}/ui/oidc/login`);
    expect(over.status).toBe(429);
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(over.headers.get("set-cookie")).toBeNull();
    clock.advance(60_000);
    await start(jar);
    const device = async () => (await v.request("POST", "/oidc/device", { token: null })).status;
    for (let i = 0; i < 20; i++) expect(await device()).toBe(201);
    expect(await device()).toBe(429);
  });

  it("signing out revokes the key minted for the session", async () => {
    const { jar } = await signIn("alice");
    const [alice] = await principals();
    const overview = await (await vaultGet(jar, `${VAULT}/ui/overview`)).text();
    const csrf = /name="csrf" value="([^"]+)"/.exec(overview)?.[1] ?? "";
    const out = await v.app.request(`${VAULT}/ui/logout`, {
      method: "POST",
      headers: { cookie: jar.cookieFor(VAULT), "content-type": "application/x-www-form-urlencoded", origin: VAULT },
      body: new URLSearchParams({ csrf }).toString(),
    });
    expect(out.status).toBe(303);
    const keys = (await expectStatus(v.asMaster("GET", `/orgs/${orgId}/principals/${alice?.id}/keys`), 200)).keys as unknown[];
    expect(keys).toEqual([]);
  });
});

describe("VAULT_CONSOLE_TOKEN_SIGNIN=false", () => {
  it("refuses a principal key at token sign-in; the master key still signs in", async () => {
    const v = buildTestVault({ consoleTokenSignin: false });
    const org = await createOrg(v);
    const p = await expectStatus(v.asMaster("POST", `/orgs/${org}/principals`, { name: "dev", role: "reader" }), 201);
    const key = await expectStatus(v.asMaster("POST", `/orgs/${org}/principals/${p.id as string}/keys`, { name: "k" }), 201);
    const post = (token: string) =>
      v.app.request(`${VAULT}/ui/login`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", origin: VAULT },
        body: new URLSearchParams({ token }).toString(),
      });
    const refused = await post(key.key as string);
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain("Principal keys do not sign in here");
    expect((await post(MASTER_KEY)).status).toBe(303);
  });
});
