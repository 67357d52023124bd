import type { Context, Hono } from "hono";
import { getCookie, setCookie, deleteCookie } from "hono/cookie";
import { forwardedIp, socketIp } from "../../auth.js";
import type { AppEnv } from "../../context.js";
import { consoleStringsFor } from "../console-strings.js";
import type { ConsoleStrings } from "../console-strings.js";
import { newNonce, pageHeaders, setPageHeaders } from "../security.js";
import { callApi, PROBE_PATH, probeMiddleware, probeToken } from "./api.js";
import type { CallerAddress } from "./api.js";
import { isStatusView } from "./kit.js";
import type { ConsoleCtx, Out, Registrar, View } from "./kit.js";
import { auditRoutes } from "./audit.js";
import { keyRoutes } from "./keys.js";
import { orgRoutes } from "./orgs.js";
import { overviewRoutes } from "./overview.js";
import type { ConsoleInfo } from "./overview.js";
import { secretRoutes } from "./secrets.js";
import { FormRefused, MAX_FORM_BYTES, MAX_SIGNIN_BYTES, parseRawForm, readRawForm } from "./form.js";
import type { RawForm } from "./form.js";
import { csrfMatches, SessionStore, SignInRate } from "./session.js";
import type { Session } from "./session.js";
import { MessageView, SignInPage } from "./signin.js";
import { webhookRoutes } from "./webhooks.js";
import { mountOidc } from "./oidc.js";
import type { ConsoleSso } from "./oidc.js";

/** The session cookie's name. */
export const SESSION_COOKIE = "vault_console";

/** What the console needs, from createApp. */
export interface ConsoleDeps {
  trustProxy: boolean;
  /** Current time, Unix milliseconds (sessions' idle and absolute limits). */
  now: () => number;
  /** VAULT_PUBLIC_URL: the cookie's `Secure` flag (https) and path, and the origin a form must come from. */
  publicUrl: () => string;
  /** The facts the overview shows besides what the API answers. */
  info: ConsoleInfo;
  /** Single sign-on (docs/sso.md); undefined: VAULT_OIDC_ISSUER is unset. */
  sso?: ConsoleSso | undefined;
  /** VAULT_CONSOLE_TOKEN_SIGNIN: false refuses principal keys at token sign-in (default true). */
  tokenSignin?: boolean | undefined;
}


/** Thrown by ctx.api when the session's token answers 401: the session ends. */
class SessionEnded extends Error {}

function rootOf(path: string): string {
  return "../".repeat(Math.max(0, path.split("/").length - 2));
}

function callerOf(c: Context<AppEnv>, trustProxy: boolean): CallerAddress {
  return { socket: socketIp(c), forwarded: trustProxy ? forwardedIp(c) : undefined };
}

/**
 * The console (docs/console.md) under /ui: sign-in exchanges a token for a
 * server-side session (cookie HttpOnly, SameSite=Strict, Secure under an
 * https public url, Path=/ui); every page and form calls the vault's own
 * API in process with the session's token, so the API's authentication,
 * permission checks, audit log and brute-force guard apply unchanged. Every
 * POST needs the session's CSRF token and, when the browser names one, the
 * vault's own Origin; otherwise 403.
 */
export function mountConsole(app: Hono<AppEnv>, deps: ConsoleDeps): void {
  const sessions = new SessionStore(deps.now);
  const signInRate = new SignInRate(deps.now);
  // Only on the probe path: no extra middleware on the API's hot path.
  app.use(PROBE_PATH, probeMiddleware);
  const cookiePath = () => `${new URL(deps.publicUrl()).pathname.replace(/\/+$/, "")}/ui`;
  // Secure when people reach the vault over HTTPS: its public URL says so, or this request came over the vault's own TLS.
  const secure = (c: Context<AppEnv>) => deps.publicUrl().startsWith("https:") || c.req.url.startsWith("https:");

  const html = (c: Context<AppEnv>, body: View, status: 200 | 400 | 403 | 404 | 409 | 415 | 429 = 200, nonce?: string) => {
    setPageHeaders(c, nonce);
    return c.html(body, status);
  };
  const redirect = (c: Context<AppEnv>, to: string) => {
    setPageHeaders(c);
    return c.redirect(to, 303);
  };
  const strings = (c: Context<AppEnv>): ConsoleStrings => consoleStringsFor(c.req.header("accept-language"));
  const signInPage = (c: Context<AppEnv>, notice?: { kind: "ok" | "error"; text: string }, status: 200 | 401 | 403 | 429 = 200) => {
    const s = strings(c);
    const nonce = newNonce();
    setPageHeaders(c, nonce);
    const provider = deps.sso?.rp.providerName();
    return c.html(<SignInPage s={s} root={rootOf(c.req.path)} notice={notice} provider={provider} peopleOff={deps.tokenSignin === false} />, status);
  };
  /** The body read but not parsed, or the 400/415 page of a body refused before parsing (FormRefused). */
  const rawForm = async (c: Context<AppEnv>, maxBytes: number, maxFields?: number): Promise<RawForm | Response> => {
    try {
      return await readRawForm(c, maxBytes, maxFields);
    } catch (err) {
      if (!(err instanceof FormRefused)) throw err;
      const s = strings(c);
      c.header("Connection", "close");
      return html(c, <MessageView s={s} root={rootOf(c.req.path)} title={s.badFormTitle} lead={err.message} />, err.status);
    }
  };
  /** The parsed fields, or the 400 page of a form over its field limit. */
  const fieldsOf = async (c: Context<AppEnv>, raw: RawForm): Promise<Record<string, string> | Response> => {
    try {
      return parseRawForm(raw);
    } catch (err) {
      if (!(err instanceof FormRefused)) throw err;
      const s = strings(c);
      return html(c, <MessageView s={s} root={rootOf(c.req.path)} title={s.badFormTitle} lead={err.message} />, err.status);
    }
  };
  const sessionOf = (c: Context<AppEnv>): Session | undefined => sessions.touch(getCookie(c, SESSION_COOKIE));
  const endSession = (c: Context<AppEnv>, session: Session) => {
    sessions.destroy(session.id);
    deleteCookie(c, SESSION_COOKIE, { path: cookiePath() });
    return redirect(c, `${rootOf(c.req.path)}ui/login?ended=1`);
  };
  /**
   * True when the browser says the form came from another origin: its
   * Sec-Fetch-Site is anything but same-origin (or none: typed by the user),
   * or its Origin names another origin than the vault's. The pages send no
   * Referer (no-referrer), so a same-origin form's Origin is "null": the
   * CSRF token is what decides for a browser without Sec-Fetch-Site.
   */
  const foreignOrigin = (c: Context<AppEnv>): boolean => {
    const site = c.req.header("sec-fetch-site");
    if (site !== undefined && site !== "same-origin" && site !== "none") return true;
    const origin = c.req.header("origin");
    if (origin === undefined || origin === "null") return false;
    const own = new Set([new URL(deps.publicUrl()).origin, new URL(c.req.url).origin]);
    return !own.has(origin);
  };
  /**
   * Re-checks the session's token as the API would (a revoked or expired
   * token ends the session) and refreshes what it may do (a changed role).
   * @returns false when the session ended.
   */
  const recheck = async (c: Context<AppEnv>, session: Session): Promise<boolean> => {
    const probed = await probeToken(app, session.token, callerOf(c, deps.trustProxy), true);
    if ("refused" in probed) return false;
    session.caps = probed.caps;
    return true;
  };
  const ctxFor = (c: Context<AppEnv>, session: Session): ConsoleCtx => {
    const from = callerOf(c, deps.trustProxy);
    return {
      session,
      s: strings(c),
      root: rootOf(c.req.path),
      nonce: newNonce(),
      query: c.req.query(),
      now: deps.now,
      api: async (method, path, body) => {
        const answer = await callApi(app, session.token, from, method, path, body);
        if (answer.status === 401) throw new SessionEnded();
        return answer;
      },
    };
  };
  const finish = (c: Context<AppEnv>, ctx: ConsoleCtx, out: Out): Response | Promise<Response> => {
    if (out instanceof Response) {
      for (const [name, value] of Object.entries(pageHeaders(ctx.nonce))) if (!out.headers.has(name)) out.headers.set(name, value);
      return out;
    }
    if (isStatusView(out)) return html(c, out.view, out.status, ctx.nonce);
    return html(c, out, 200, ctx.nonce);
  };

  const registrar: Registrar = {
    page(path, handler) {
      app.get(`/ui/${path}`, async (c) => {
        const session = sessionOf(c);
        if (session === undefined) return redirect(c, `${rootOf(c.req.path)}ui/login`);
        if (!(await recheck(c, session))) return endSession(c, session);
        const ctx = ctxFor(c, session);
        try {
          return await finish(c, ctx, await handler(ctx, c));
        } catch (err) {
          if (err instanceof SessionEnded) return endSession(c, session);
          throw err;
        }
      });
    },
    action(path, handler) {
      app.post(`/ui/${path}`, async (c) => {
        const s = strings(c);
        const refuse = () => html(c, <MessageView s={s} root={rootOf(c.req.path)} title={s.refusedTitle} lead={s.crossSite} />, 403);
        if (foreignOrigin(c)) return refuse();
        // The session first, then the CSRF token, then the fields: a request without both is refused before its body is parsed (docs/console.md, "Limits").
        const session = sessionOf(c);
        if (session === undefined) return refuse();
        const raw = await rawForm(c, MAX_FORM_BYTES);
        if (raw instanceof Response) return raw;
        if (!csrfMatches(session, raw.csrf)) return refuse();
        if (!(await recheck(c, session))) return endSession(c, session);
        const form = await fieldsOf(c, raw);
        if (form instanceof Response) return form;
        const ctx = ctxFor(c, session);
        try {
          return await finish(c, ctx, await handler(ctx, form, c));
        } catch (err) {
          if (err instanceof SessionEnded) return endSession(c, session);
          throw err;
        }
      });
    },
  };

  app.get("/ui", (c) => redirect(c, sessionOf(c) === undefined ? "ui/login" : "ui/overview"));
  app.get("/ui/", (c) => redirect(c, sessionOf(c) === undefined ? "login" : "overview"));
  app.get("/ui/login", (c) => {
    if (sessionOf(c) !== undefined) return redirect(c, "overview");
    const s = strings(c);
    return signInPage(c, c.req.query("ended") === undefined ? undefined : { kind: "ok", text: s.sessionEnded });
  });
  app.post("/ui/login", async (c) => {
    const s = strings(c);
    if (foreignOrigin(c)) return html(c, <MessageView s={s} root={rootOf(c.req.path)} title={s.refusedTitle} lead={s.crossSite} />, 403);
    const raw = await rawForm(c, MAX_SIGNIN_BYTES, 8);
    if (raw instanceof Response) return raw;
    const form = await fieldsOf(c, raw);
    if (form instanceof Response) return form;
    const token = (form.token ?? "").trim();
    const wait = signInRate.take(token);
    if (wait > 0) {
      c.header("Retry-After", String(wait));
      return signInPage(c, { kind: "error", text: s.signInTooOften }, 429);
    }
    // The probe goes through the front middleware: a wrong token counts against the brute-force guard (429 once over it).
    const probed = await probeToken(app, token, callerOf(c, deps.trustProxy));
    if ("refused" in probed) {
      const status = probed.refused.status === 429 ? 429 : probed.refused.status === 401 ? 401 : 403;
      const error = typeof probed.refused.body.message === "string" ? probed.refused.body.message : String(probed.refused.body.error ?? status);
      return signInPage(c, { kind: "error", text: s.signInRefused.replace("{error}", error) }, status);
    }
    if (probed.caps.kind === "principal" && deps.tokenSignin === false) {
      const text = s.ssoPeopleOff.replace("{provider}", deps.sso?.rp.providerName() ?? "the identity provider");
      return signInPage(c, { kind: "error", text }, 403);
    }
    const session = sessions.create(token, probed.caps);
    setCookie(c, SESSION_COOKIE, session.id, { httpOnly: true, sameSite: "Strict", secure: secure(c), path: cookiePath() });
    return redirect(c, "overview");
  });
  app.post("/ui/logout", async (c) => {
    const session = sessionOf(c);
    if (session !== undefined && !foreignOrigin(c)) {
      const raw = await rawForm(c, MAX_SIGNIN_BYTES, 8);
      if (raw instanceof Response) return raw;
      if (csrfMatches(session, raw.csrf)) {
        sessions.destroy(session.id);
        // A key minted for this session at a single sign-on ends with it (docs/sso.md).
        if (session.minted === true && session.caps.keyId !== null) {
          await callApi(app, session.token, callerOf(c, deps.trustProxy), "DELETE", `/me/keys/${session.caps.keyId}`);
        }
      }
    }
    deleteCookie(c, SESSION_COOKIE, { path: cookiePath() });
    return redirect(c, "login?out=1");
  });

  if (deps.sso !== undefined) {
    mountOidc(app, {
      sso: deps.sso,
      sessions,
      now: deps.now,
      strings,
      rootOf,
      callerOf: (c) => callerOf(c, deps.trustProxy),
      setSession: (c, session) => setCookie(c, SESSION_COOKIE, session.id, { httpOnly: true, sameSite: "Strict", secure: secure(c), path: cookiePath() }),
      secure,
      cookiePath,
    });
  }

  overviewRoutes(registrar, deps.info);
  secretRoutes(registrar, deps.info);
  keyRoutes(registrar);
  auditRoutes(registrar, deps.info);
  orgRoutes(registrar);
  webhookRoutes(registrar);

  app.all("/ui/*", (c) => {
    const s = strings(c);
    return html(c, <MessageView s={s} root={rootOf(c.req.path)} title="Not found" lead="There is no console page at this address." />, 404);
  });
}

/** True for the console's paths, which the front middleware lets through: the console authenticates by its cookie, then calls the API with the session's token. */
export function isConsolePath(path: string): boolean {
  return path === "/ui" || path.startsWith("/ui/");
}
