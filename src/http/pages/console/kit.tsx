import type { Context } from "hono";
import type { Child } from "hono/jsx";
import type { HtmlEscapedString } from "hono/utils/html";
import type { AppEnv } from "../../context.js";
import type { ConsoleStrings } from "../console-strings.js";
import { DOCTYPE, PageHead } from "../layout.js";
import { fill } from "../strings.js";
import type { ApiAnswer } from "./api.js";
import type { Caps, Flash, Session } from "./session.js";

/** What a console page or action gets: the session, strings, and the API as this session's token. */
export interface ConsoleCtx {
  session: Session;
  s: ConsoleStrings;
  /** From this page's path back to the vault's root (`../` for /ui/x). */
  root: string;
  /** The answer's CSP nonce. */
  nonce: string;
  /** Calls the API in process with the session's token; a 401 ends the session (SessionEnded). */
  api: (method: string, path: string, body?: unknown) => Promise<ApiAnswer>;
  /** The request's query parameters. */
  query: Record<string, string>;
  /** The vault's clock, Unix milliseconds (a key's expiry, an audit filter's "2h ago"). */
  now: () => number;
}

/** A rendered page. */
export type View = HtmlEscapedString | Promise<HtmlEscapedString>;
/** A page answered with another status than 200 (the API's 403 or 400 shown as a page). */
export interface StatusView {
  status: 400 | 403 | 404 | 409;
  view: View;
}
/** What a handler answers: a page, a page with a status, or a Response (a redirect, an export). */
export type Out = Response | View | StatusView;
/** A page handler. */
export type PageHandler = (ctx: ConsoleCtx, c: Context<AppEnv>) => Promise<Out>;
/** A form handler: gets the posted fields (strings). */
export type ActionHandler = (ctx: ConsoleCtx, form: Record<string, string>, c: Context<AppEnv>) => Promise<Out>;
/** How a page module adds its routes: `page("secrets", ...)` answers GET /ui/secrets, `action(...)` a POST. */
export interface Registrar {
  page(path: string, handler: PageHandler): void;
  action(path: string, handler: ActionHandler): void;
}

/** True for a StatusView. */
export function isStatusView(out: Out): out is StatusView {
  return typeof out === "object" && out !== null && !(out instanceof Response) && "view" in out && "status" in out;
}

/** The sections of the console, in the navigation's order. */
export type Section = "overview" | "secrets" | "audit" | "keys" | "orgs" | "webhooks";

/**
 * Which sections the token's kind and permissions can use (the API's
 * permission table, docs/api.md and docs/keys.md): a section it cannot use
 * is not shown; its routes still answer the API's 403 if called.
 */
export function sectionsFor(caps: Caps): Section[] {
  if (caps.kind === "master") return ["overview", "secrets", "audit", "keys", "orgs", "webhooks"];
  if (caps.kind === "scoped") {
    const admin = caps.permissions.includes("admin");
    return admin ? ["overview", "secrets", "audit", "keys", "webhooks"] : ["overview", "secrets"];
  }
  const out: Section[] = ["overview", "secrets"];
  if (caps.letters.includes("a")) out.push("audit");
  if (caps.letters.includes("M")) out.push("webhooks");
  return out;
}

/** True when the token holds the permission a secret action needs (global: read/write/delete, org: r/c/P/d). */
export function mayOnSecrets(caps: Caps, action: "list" | "read" | "create" | "patch" | "delete"): boolean {
  if (caps.kind === "master") return true;
  if (caps.kind === "scoped") {
    const need = { list: "admin", read: "read", create: "write", patch: "write", delete: "delete" }[action];
    return caps.permissions.includes(need) || caps.permissions.includes("admin");
  }
  const letter = { list: "l", read: "r", create: "c", patch: "P", delete: "d" }[action];
  return caps.letters.includes(letter);
}

/** Where the session's secrets live: /secrets, or its org's for a principal key. */
export function secretsBase(caps: Caps): string {
  return caps.kind === "principal" && caps.orgId !== null ? `/orgs/${encodeURIComponent(caps.orgId)}/secrets` : "/secrets";
}

/** A Unix-seconds time as `YYYY-MM-DD HH:MM:SS UTC`; "" for null. */
export function when(seconds: unknown): string {
  if (typeof seconds !== "number") return "";
  return `${new Date(seconds * 1000).toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/** The API's refusal as one line: `error: message`. */
export function apiMessage(answer: ApiAnswer): string {
  const error = typeof answer.body.error === "string" ? answer.body.error : `HTTP ${answer.status}`;
  return typeof answer.body.message === "string" ? `${error}: ${answer.body.message}` : error;
}

/** A list field of an API answer (`secrets`, `keys`, ...), as objects. */
export function rows(answer: ApiAnswer, field: string): Record<string, unknown>[] {
  const list = answer.body[field];
  return Array.isArray(list) ? (list.filter((x) => x !== null && typeof x === "object") as Record<string, unknown>[]) : [];
}

/** A field as text ("" when absent). */
export function text(value: unknown): string {
  return value === null || value === undefined ? "" : String(value);
}

/** The hidden CSRF field every console form carries. */
export function Csrf(props: { session: Session }) {
  return <input type="hidden" name="csrf" value={props.session.csrf} />;
}

/** A one-time message: ok or error, and a value shown once with a Copy button. */
export function FlashBox(props: { flash: Flash | undefined; s: ConsoleStrings }) {
  const f = props.flash;
  if (f === undefined) return null;
  return (
    <div class={`notice ${f.kind}`} role={f.kind === "error" ? "alert" : "status"}>
      <p>{f.text}</p>
      {f.secret === undefined ? null : (
        <div>
          <label for="once">{f.kind === "ok" ? props.s.tokenOnce : ""}</label>
          <input id="once" class="mono" readonly value={f.secret} />
          <button type="button" class="secondary" data-copy="once">
            {props.s.copy}
          </button>
          <span id="status" class="help" role="status" aria-live="polite" />
        </div>
      )}
    </div>
  );
}

/** The frame of a signed-in console page: navigation (only what the token may use), who is signed in, sign-out, the flash. */
export function Frame(props: { ctx: ConsoleCtx; title: string; section: Section; flash?: Flash | undefined; children?: Child }) {
  const { ctx } = props;
  const { s, root, session } = ctx;
  const caps = session.caps;
  const labels: Record<Section, string> = {
    overview: s.navOverview,
    secrets: s.navSecrets,
    audit: s.navAudit,
    keys: s.navKeys,
    orgs: s.navOrgs,
    webhooks: s.navWebhooks,
  };
  const who =
    caps.kind === "master"
      ? s.whoMaster
      : caps.kind === "scoped"
        ? fill(s.whoScoped, { id: text(caps.keyId), perms: caps.permissions.join(", ") })
        : session.person !== undefined
          ? fill(s.whoPerson, { name: session.person, org: text(caps.orgId), role: text(caps.role) })
          : fill(s.whoPrincipal, { org: text(caps.orgId), role: text(caps.role) });
  return (
    <>
    {DOCTYPE}
    <html lang={s.lang}>
      <PageHead product={s.product} title={props.title} root={root} />
      <body class="console" data-strings={JSON.stringify({ copied: s.copied, copyFailed: s.copyFailed })}>
        <header>
          <span class="brand">{s.product}</span>
          <nav aria-label={s.nav}>
            <ul>
              {sectionsFor(caps).map((name) => (
                <li>
                  <a href={`${root}ui/${name}`} aria-current={name === props.section ? "page" : undefined}>
                    {labels[name]}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
          <form method="post" action={`${root}ui/logout`} class="signout">
            <span class="muted">{fill(s.signedInAs, { who })}</span>
            <Csrf session={session} />
            <button type="submit" class="secondary">
              {s.signOut}
            </button>
          </form>
        </header>
        <main id="main">
          <h1>{props.title}</h1>
          <FlashBox flash={props.flash} s={s} />
          {props.children}
        </main>
        <script nonce={ctx.nonce} src={`${root}assets/console.js`} defer />
      </body>
    </html>
    </>
  );
}

/** Links to the first and the next page of a list, keeping the other query parameters. */
export function Pager(props: { ctx: ConsoleCtx; path: string; next: unknown }) {
  const { ctx } = props;
  const keep = Object.entries(ctx.query).filter(([k]) => k !== "cursor");
  const link = (cursor: string | undefined) => {
    const params = new URLSearchParams(keep);
    if (cursor !== undefined) params.set("cursor", cursor);
    const q = params.toString();
    return `${ctx.root}ui/${props.path}${q === "" ? "" : `?${q}`}`;
  };
  const hasNext = typeof props.next === "string" && props.next !== "";
  if (!hasNext && ctx.query.cursor === undefined) return null;
  return (
    <nav class="pager" aria-label="pages">
      {ctx.query.cursor === undefined ? null : <a href={link(undefined)}>{ctx.s.first}</a>}
      {hasNext ? <a href={link(props.next as string)}>{ctx.s.next}</a> : null}
    </nav>
  );
}

/** A 303 back to console page `path` (relative to /ui/), with a message for it (POST/redirect/GET). */
export function back(ctx: ConsoleCtx, path: string, flash?: Flash): Response {
  if (flash !== undefined) ctx.session.flash = flash;
  return new Response(null, { status: 303, headers: { Location: `${ctx.root}ui/${path}` } });
}

/** The flash for this page, removed from the session (a once-shown token is never shown twice). */
export function takeFlash(ctx: ConsoleCtx): Flash | undefined {
  const flash = ctx.session.flash;
  ctx.session.flash = undefined;
  return flash;
}

/**
 * An API refusal after a form: a 403 is answered as a 403 page (the token
 * may not do this); any other refusal goes back to `path` with the API's
 * message.
 */
export function refused(ctx: ConsoleCtx, answer: ApiAnswer, path: string, section: Section): Out {
  if (answer.status === 403) return forbidden(ctx, answer, section);
  return back(ctx, path, { kind: "error", text: fill(ctx.s.apiError, { error: apiMessage(answer) }) });
}

/** The API's 403 as a page of status 403. */
export function forbidden(ctx: ConsoleCtx, answer: ApiAnswer, section: Section): StatusView {
  return {
    status: 403,
    view: (
      <Frame ctx={ctx} title={ctx.s.forbiddenTitle} section={section} flash={{ kind: "error", text: fill(ctx.s.apiError, { error: apiMessage(answer) }) }} />
    ),
  };
}

/** An optional positive integer form field: undefined for empty, NaN-free. */
export function intField(value: string | undefined): number | undefined | string {
  const v = (value ?? "").trim();
  if (v === "") return undefined;
  return /^\d{1,12}$/.test(v) ? Number(v) : v;
}
