import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import Provider from "oidc-provider";

// A real OpenID Provider for the tests (docs/testing.md): panva's certified
// oidc-provider on a free loopback port, with users in groups, the vault's
// client and a second one (another audience), PKCE, the device flow, an ID
// token lifetime the test sets, and a login page of its own (a form with a
// Username field) that a test drives with Chromium or by HTTP.

/** A person at the test provider: their `sub`, email and groups (changeable between sign-ins). */
export interface IdpUser {
  sub: string;
  email: string;
  name: string;
  groups: string[];
}

/** The running test provider. */
export interface TestIdp {
  /** The issuer URL, `http://127.0.0.1:<port>`. */
  issuer: string;
  /** The vault's client. */
  clientId: string;
  clientSecret: string;
  /** A second client registered with the same redirect URLs (another audience). */
  otherClientId: string;
  users: Map<string, IdpUser>;
  /** Replaces a user's groups: the next sign-in's ID token carries them. */
  setGroups(login: string, groups: string[]): void;
  /** ID tokens issued from now on live this many seconds. */
  setIdTokenTtl(seconds: number): void;
  /**
   * Serves `jwks` at the provider's JWKS endpoint instead of its own keys
   * (undefined: its own again), so that a test sees an ID token whose
   * signature does not verify against the published keys.
   */
  publishKeys(jwks: { keys: object[] } | undefined): void;
  close(): Promise<void>;
}

const page = (body: string) =>
  `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Test identity provider</title></head><body><main><h1>Test identity provider</h1>${body}</main></body></html>`;

const escape = (s: string) => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

async function formOf(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

/**
 * Starts the provider on 127.0.0.1 with `users` (login -> user) and the
 * vault's `redirectUris`; `redirectUris` may be given later with
 * `setRedirectUris` when the vault's port is known only once it listens
 * (the provider answers 503 until then).
 */
export async function startTestIdp(
  users: Record<string, Omit<IdpUser, "sub"> & { sub?: string }>,
  redirectUris?: string[],
): Promise<TestIdp & { setRedirectUris(uris: string[]): void }> {
  let provider: Provider | undefined;
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  let idTokenTtl = 300;
  let published: { keys: object[] } | undefined;
  const people = new Map<string, IdpUser>();
  for (const [login, user] of Object.entries(users)) people.set(login, { ...user, sub: user.sub ?? `sub-${login}` });
  const bySub = (sub: string) => [...people.values()].find((u) => u.sub === sub);

  const server: Server = createServer((req, res) => {
    void (async () => {
      if (provider === undefined || handler === undefined) {
        res.writeHead(503).end();
        return;
      }
      const url = new URL(req.url ?? "/", "http://idp");
      if (published !== undefined && url.pathname === "/jwks") {
        res.writeHead(200, { "content-type": "application/jwk-set+json" }).end(JSON.stringify(published));
        return;
      }
      const m = /^\/interaction\/([^/]+)(\/login)?$/.exec(url.pathname);
      if (m === null) {
        handler(req, res);
        return;
      }
      try {
        const details = await provider.interactionDetails(req, res);
        if (req.method === "POST" && m[2] === "/login") {
          const form = await formOf(req);
          const login = form.get("login") ?? "";
          const user = people.get(login);
          if (user === undefined) {
            res.writeHead(200, { "content-type": "text/html" }).end(page(`<p role="alert">Unknown user.</p>${loginForm(details.uid)}`));
            return;
          }
          await provider.interactionFinished(req, res, { login: { accountId: user.sub } }, { mergeWithLastSubmission: false });
          return;
        }
        res.writeHead(200, { "content-type": "text/html" }).end(page(loginForm(details.uid)));
      } catch (err) {
        res.writeHead(400, { "content-type": "text/plain" }).end(String(err));
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientSecret = "test-idp-client-secret-0123456789";
  const grantTypes = ["authorization_code", "urn:ietf:params:oauth:grant-type:device_code"];

  const configure = (uris: string[]) => {
    const clients = ["vault", "other-app"].map((client_id) => ({
      client_id,
      client_secret: clientSecret,
      redirect_uris: uris,
      grant_types: grantTypes,
      response_types: ["code" as const],
      token_endpoint_auth_method: "client_secret_post" as const,
    }));
    provider = new Provider(issuer, {
      clients,
      clientBasedCORS: () => false,
      pkce: { required: () => true },
      conformIdTokenClaims: false,
      claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name", "preferred_username"], groups: ["groups"] },
      scopes: ["openid", "email", "profile", "groups"],
      features: { devInteractions: { enabled: false }, deviceFlow: { enabled: true } },
      interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
      cookies: { keys: ["test-idp-cookie-key-0123456789abcdef"] },
      ttl: { IdToken: () => idTokenTtl, AccessToken: 600, AuthorizationCode: 60, DeviceCode: 600, Grant: 3600, Interaction: 600, Session: 3600 },
      findAccount: (_ctx, sub) => {
        const user = bySub(sub);
        if (user === undefined) return undefined;
        return {
          accountId: sub,
          claims: () => ({ sub, email: user.email, email_verified: true, name: user.name, preferred_username: user.email.split("@")[0], groups: [...user.groups] }),
        };
      },
      // First-party clients: every scope is granted without a consent page.
      loadExistingGrant: async (ctx) => {
        const session = ctx.oidc.session;
        const client = ctx.oidc.client;
        if (session === undefined || client === undefined || session.accountId === undefined) return undefined;
        const grantId = session.grantIdFor(client.clientId);
        if (grantId !== undefined) {
          const found = await ctx.oidc.provider.Grant.find(grantId);
          if (found !== undefined) return found;
        }
        const grant = new ctx.oidc.provider.Grant({ clientId: client.clientId, accountId: session.accountId });
        grant.addOIDCScope("openid email profile groups");
        await grant.save();
        session.ensureClientContainer(client.clientId);
        session.grantIdFor(client.clientId, grant.jti);
        return grant;
      },
    });
    provider.proxy = false;
    handler = provider.callback() as (req: IncomingMessage, res: ServerResponse) => void;
  };
  if (redirectUris !== undefined) configure(redirectUris);

  return {
    issuer,
    clientId: "vault",
    clientSecret,
    otherClientId: "other-app",
    users: people,
    setRedirectUris: configure,
    setGroups(login, groups) {
      const user = people.get(login);
      if (user === undefined) throw new Error(`no user ${login}`);
      user.groups = groups;
    },
    setIdTokenTtl(seconds) {
      idTokenTtl = seconds;
    },
    publishKeys(jwks) {
      published = jwks;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function loginForm(uid: string): string {
  return `<form method="post" action="/interaction/${escape(uid)}/login"><label for="login">Username</label> <input id="login" name="login" autocomplete="username" required> <button type="submit">Sign in</button></form>`;
}

/**
 * A browser stand-in for HTTP: follows redirects by hand, keeping each
 * host's cookies, so a test drives the provider's pages without Chromium.
 */
export class CookieFetch {
  private readonly jar = new Map<string, Map<string, string>>();

  /** The cookies held for `url`'s host:port, as a Cookie header. */
  cookieFor(url: string): string {
    const host = new URL(url).host;
    return [...(this.jar.get(host) ?? new Map<string, string>()).entries()].map(([k, v]) => `${k}=${v}`).join("; ");
  }

  /** Keeps the Set-Cookie headers of an answer from `url`. */
  keep(url: string, res: Response): void {
    const host = new URL(url).host;
    const own = this.jar.get(host) ?? new Map<string, string>();
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const at = (pair ?? "").indexOf("=");
      if (at < 0) continue;
      const name = (pair ?? "").slice(0, at).trim();
      const value = (pair ?? "").slice(at + 1).trim();
      if (value === "" || /max-age=0|expires=thu, 01 jan 1970/i.test(line)) own.delete(name);
      else own.set(name, value);
    }
    this.jar.set(host, own);
  }

  /**
   * Requests `url` and follows redirects while `follow(next)` says so.
   * @returns the last answer and its URL.
   */
  async go(url: string, init: RequestInit = {}, follow: (next: string) => boolean = () => true): Promise<{ res: Response; url: string }> {
    let at = url;
    let req: RequestInit = init;
    for (let hops = 0; hops < 20; hops++) {
      const headers = new Headers(req.headers);
      const cookie = this.cookieFor(at);
      if (cookie !== "") headers.set("cookie", cookie);
      const res = await fetch(at, { ...req, headers, redirect: "manual" });
      this.keep(at, res);
      const location = res.headers.get("location");
      if (res.status < 300 || res.status >= 400 || location === null) return { res, url: at };
      const next = new URL(location, at).href;
      if (!follow(next)) return { res, url: next };
      await res.arrayBuffer();
      at = next;
      req = {};
    }
    throw new Error("too many redirects");
  }
}

/**
 * Signs `login` in at the provider from its authorization URL by HTTP: the
 * login form posted, redirects followed until one leaves the provider.
 * @returns the URL the provider sends the browser back to (the vault's callback with code and state).
 */
export async function loginAtIdp(browser: CookieFetch, idp: { issuer: string }, authorizationUrl: string, login: string): Promise<string> {
  const leaves = (next: string) => next.startsWith(idp.issuer);
  let { res, url } = await browser.go(authorizationUrl, {}, leaves);
  if (!url.startsWith(idp.issuer)) return url;
  const html = await res.text();
  const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1];
  if (action === undefined) throw new Error(`no login form at the provider: ${html.slice(0, 300)}`);
  ({ url } = await browser.go(new URL(action.replace(/&#47;/g, "/"), idp.issuer).href, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ login }).toString(),
  }, leaves));
  return url;
}

/** The first POST form of `html` (oidc-provider's device pages, its auto-submitted resume form): its action and inputs. */
function deviceForm(html: string): { action: string; fields: URLSearchParams } | undefined {
  const form = /<form[^>]*method="post"[^>]*action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/.exec(html);
  if (form === null) return undefined;
  const fields = new URLSearchParams();
  for (const input of (form[2] ?? "").matchAll(/<input([\s\S]*?)>/g)) {
    const attrs = input[1] ?? "";
    const name = /name="([^"]+)"/.exec(attrs)?.[1];
    const value = /value="([^"]*)"/.exec(attrs)?.[1] ?? "";
    if (name !== undefined) fields.set(name, value);
  }
  return { action: form[1] ?? "", fields };
}

/**
 * Approves a device sign-in at the provider by HTTP, as the person would in
 * a browser: the verification page with the code filled in, its
 * confirmation, then the login form for `login`, redirects followed.
 * @param userCode the code the CLI printed (typed into the input form when the page has none).
 * @returns the last page's text (the provider's success page).
 */
export async function approveDevice(browser: CookieFetch, idp: { issuer: string }, verificationUri: string, userCode: string, login: string): Promise<string> {
  let { res, url } = await browser.go(verificationUri);
  for (let step = 0; step < 6; step++) {
    const html = await res.text();
    const loginAction = /<form method="post" action="(\/interaction\/[^"]+)"/.exec(html)?.[1];
    const device = loginAction === undefined ? deviceForm(html) : undefined;
    if (device !== undefined) {
      if (device.fields.has("user_code") && (device.fields.get("user_code") ?? "") === "") device.fields.set("user_code", userCode);
      ({ res, url } = await browser.go(new URL(device.action, url).href, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: device.fields.toString(),
      }));
    } else if (loginAction !== undefined) {
      ({ res, url } = await browser.go(new URL(loginAction, idp.issuer).href, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ login }).toString(),
      }));
    } else {
      return html;
    }
  }
  throw new Error("the provider's device pages did not end");
}
