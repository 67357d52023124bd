import { randomBytes } from "node:crypto";
import type { Context, Hono } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { AppEnv } from "../../context.js";
import type { SingleSignOn } from "../../../domain/sso/sign-in.js";
import type { RefusalReason } from "../../../domain/sso/sign-in.js";
import type { UnitOfWork, Work } from "../../../store/work.js";
import { OidcRefused, SIGNIN_STARTS_PER_MINUTE } from "../../sso/oidc.js";
import type { OidcRelyingParty, PendingSignIn } from "../../sso/oidc.js";
import type { ConsoleStrings } from "../console-strings.js";
import { DOCTYPE, PageHead } from "../layout.js";
import { newNonce, setPageHeaders } from "../security.js";
import { probeToken } from "./api.js";
import type { CallerAddress } from "./api.js";
import { SESSION_MAX_MS } from "./session.js";
import { PerAddressRate } from "../anonymous.js";
import type { Session, SessionStore } from "./session.js";

/** The cookie that ties a started sign-in to its browser (docs/sso.md, "Refusals"). */
export const OIDC_COOKIE = "vault_oidc";
/** A started sign-in waits this long for its callback, milliseconds. */
export const PENDING_MS = 10 * 60_000;
/** At most this many started sign-ins wait at once; past it the oldest is dropped. */
export const PENDING_LIMIT = 10_000;


/** Single sign-on for the console: the relying party, the sign-in decision and the unit of work to run it in. */
export interface ConsoleSso {
  rp: OidcRelyingParty;
  signIn: SingleSignOn;
  tx: UnitOfWork<Work>;
}

/** What the console's routes hand the single sign-on routes (routes.tsx). */
export interface OidcRouteKit {
  sso: ConsoleSso;
  sessions: SessionStore;
  now: () => number;
  strings: (c: Context<AppEnv>) => ConsoleStrings;
  rootOf: (path: string) => string;
  callerOf: (c: Context<AppEnv>) => CallerAddress;
  /** Sets the session cookie of a new session. */
  setSession: (c: Context<AppEnv>, session: Session) => void;
  /** Cookie flags: Secure when people reach the vault over HTTPS; the console's path. */
  secure: (c: Context<AppEnv>) => boolean;
  cookiePath: () => string;
}

/**
 * The started sign-ins, by the 256-bit value of their browser's cookie,
 * in memory only: each is taken once (a replayed callback finds nothing),
 * and dropped after PENDING_MS.
 */
export class PendingSignIns {
  private readonly byId = new Map<string, PendingSignIn>();

  /** @param now current time, Unix milliseconds. */
  constructor(
    private readonly now: () => number,
    private readonly limit = PENDING_LIMIT,
  ) {}

  /** Keeps a started sign-in. @returns the cookie value naming it. */
  put(pending: PendingSignIn): string {
    this.sweep();
    while (this.byId.size >= this.limit) {
      const oldest = this.byId.keys().next().value;
      if (oldest === undefined) break;
      this.byId.delete(oldest);
    }
    const id = randomBytes(32).toString("base64url");
    this.byId.set(id, pending);
    return id;
  }

  /** Takes (and forgets) the started sign-in of cookie value `id`; undefined when unknown, taken or too old. */
  take(id: string | undefined): PendingSignIn | undefined {
    if (id === undefined || id === "") return undefined;
    const pending = this.byId.get(id);
    this.byId.delete(id);
    if (pending === undefined || this.now() - pending.createdAt >= PENDING_MS) return undefined;
    return pending;
  }

  private sweep(): void {
    const at = this.now();
    for (const [id, p] of this.byId) if (at - p.createdAt >= PENDING_MS) this.byId.delete(id);
  }
}

/** The text of a refusal's reason for the refused page. */
function reasonText(s: ConsoleStrings, reason: RefusalReason, message: string): string {
  return reason === "no_role" ? s.ssoNoRole : message;
}

/**
 * The console's single sign-on routes (docs/sso.md, "Signing in to the
 * console"): GET /ui/oidc/login starts the authorization code flow (PKCE,
 * state, nonce; a cookie of its own, SameSite=Lax so the provider's
 * redirect carries it, ties the sign-in to this browser); GET
 * /ui/oidc/callback takes that sign-in once, lets openid-client check the
 * answer and the ID token, and signs the person in (SingleSignOn.signIn):
 * the session holds a principal key minted for it, valid for
 * min(VAULT_OIDC_KEY_TTL, the session's 12 hours). Any refusal answers a
 * 403 page saying why, changes nothing and writes a `signin.refused` row.
 */
export function mountOidc(app: Hono<AppEnv>, kit: OidcRouteKit): void {
  const pending = new PendingSignIns(kit.now);
  const starts = new PerAddressRate(SIGNIN_STARTS_PER_MINUTE, 60_000, kit.now);
  const { rp } = kit.sso;
  const oidcPath = () => `${kit.cookiePath()}/oidc`;

  const refusedPage = (c: Context<AppEnv>, reason: RefusalReason, message: string) => {
    const s = kit.strings(c);
    setPageHeaders(c, newNonce());
    return c.html(
      <OidcMessage
        s={s}
        root={kit.rootOf(c.req.path)}
        title={s.ssoRefusedTitle}
        lead={s.ssoRefused.replace("{provider}", rp.providerName()).replace("{reason}", reasonText(s, reason, message))}
        link={{ href: `${kit.rootOf(c.req.path)}ui/login`, text: s.signInTitle }}
        refused={reason}
      />,
      403,
    );
  };
  const ipOf = (c: Context<AppEnv>) => {
    const from = kit.callerOf(c);
    return from.forwarded ?? from.socket;
  };

  app.get("/ui/oidc/login", async (c) => {
    const wait = starts.take(ipOf(c));
    if (wait > 0) {
      const s = kit.strings(c);
      c.header("Retry-After", String(Math.ceil(wait / 1000)));
      setPageHeaders(c, newNonce());
      return c.html(
        <OidcMessage s={s} root={kit.rootOf(c.req.path)} title={s.ssoRefusedTitle} lead={s.ssoTooOften} link={{ href: `${kit.rootOf(c.req.path)}ui/login`, text: s.signInTitle }} refused="rate" />,
        429,
      );
    }
    let started: Awaited<ReturnType<OidcRelyingParty["start"]>>;
    try {
      started = await rp.start();
    } catch (err) {
      if (!(err instanceof OidcRefused)) throw err;
      await kit.sso.tx.run((w) => kit.sso.signIn.refuse(w, rp.settings.orgId, err.reason, ipOf(c)));
      return refusedPage(c, err.reason, err.message);
    }
    const id = pending.put(started.pending);
    setCookie(c, OIDC_COOKIE, id, { httpOnly: true, sameSite: "Lax", secure: kit.secure(c), path: oidcPath(), maxAge: PENDING_MS / 1000 });
    setPageHeaders(c);
    return c.redirect(started.url, 303);
  });

  app.get("/ui/oidc/callback", async (c) => {
    const waiting = pending.take(getCookie(c, OIDC_COOKIE));
    deleteCookie(c, OIDC_COOKIE, { path: oidcPath() });
    const ip = ipOf(c);
    const refuse = async (reason: RefusalReason, message: string) => {
      await kit.sso.tx.run((w) => kit.sso.signIn.refuse(w, rp.settings.orgId, reason, ip));
      return refusedPage(c, reason, message);
    };
    if (waiting === undefined) return refuse("state", "no sign-in of this browser is waiting for this answer (it was used already, is older than 10 minutes, or was started elsewhere)");
    let identity: Awaited<ReturnType<OidcRelyingParty["finish"]>>;
    try {
      identity = await rp.finish(new URL(c.req.url), waiting);
    } catch (err) {
      if (!(err instanceof OidcRefused)) throw err;
      return refuse(err.reason, err.message);
    }
    const validBefore = kit.now() + Math.min(SESSION_MAX_MS, rp.settings.keyTtlSeconds * 1000);
    const outcome = await kit.sso.tx.run((w) =>
      kit.sso.signIn.signIn(w, identity, rp.settings, { keyName: "console sign-in", validBefore }, ip),
    );
    if (outcome.kind === "refused") return refusedPage(c, outcome.reason, outcome.reason === "no_org" ? "VAULT_OIDC_ORG names no organization of this vault" : outcome.reason);
    const probed = await probeToken(app, outcome.token, kit.callerOf(c), true);
    if ("refused" in probed) return refusedPage(c, "provider", "the key made for this sign-in was refused");
    const session = kit.sessions.create(outcome.token, probed.caps, true);
    session.person = outcome.principal.name;
    kit.setSession(c, session);
    const s = kit.strings(c);
    setPageHeaders(c, newNonce());
    // A page of its own, not a redirect: the session cookie is SameSite=Strict, and a browser
    // sends it only on a navigation that starts on the vault, not on the provider's redirect chain.
    return c.html(
      <OidcMessage
        s={s}
        root={kit.rootOf(c.req.path)}
        title={s.ssoSignedInTitle}
        lead={s.ssoSignedInLead.replace("{name}", outcome.principal.name).replace("{role}", outcome.principal.role)}
        link={{ href: "../overview", text: s.ssoContinue }}
        refresh="../overview"
      />,
      200,
    );
  });
}

/**
 * A single sign-on page that says one thing and offers one link; `refresh`
 * moves on by itself at once (no script; a delayed refresh is a WCAG 2.2.1
 * failure, axe's meta-refresh rule).
 */
export function OidcMessage(props: {
  s: ConsoleStrings;
  root: string;
  title: string;
  lead: string;
  link: { href: string; text: string };
  refresh?: string | undefined;
  refused?: string | undefined;
}) {
  return (
    <>
      {DOCTYPE}
      <html lang={props.s.lang}>
        <PageHead product={props.s.product} root={props.root} title={props.title}>
          {props.refresh === undefined ? null : <meta http-equiv="refresh" content={`0;url=${props.refresh}`} />}
        </PageHead>
        <body>
          <header>
            <span class="brand">{props.s.product}</span>
          </header>
          <main id="main">
            <h1>{props.title}</h1>
            <p role={props.refused === undefined ? "status" : "alert"} data-refused={props.refused}>
              {props.lead}
            </p>
            <p>
              <a href={props.link.href}>{props.link.text}</a>
            </p>
          </main>
        </body>
      </html>
    </>
  );
}
