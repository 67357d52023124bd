import type { Child } from "hono/jsx";
import type { PageScript } from "./assets.js";
import { raw } from "hono/html";
import type { Strings } from "./strings.js";

/**
 * What every page starts with: without it a browser renders in quirks mode
 * (docs/console.md, "Every page"). Put before `<html>` by Layout and the
 * console's frames.
 */
export const DOCTYPE = raw("<!DOCTYPE html>");

/** What every page's frame needs. */
export interface LayoutProps {
  s: Strings;
  title: string;
  /** From this page's path back to the vault's root, `""` or `../` (so a VAULT_PUBLIC_URL with a path works behind a proxy). */
  root: string;
  /** The page's script (one of page-assets.json's, so the build has it) and the answer's CSP nonce; none for a page without script. */
  script?: { name: PageScript; nonce: string } | undefined;
  children?: Child;
}

/**
 * The frame of every page: language, viewport, no referrer, no indexing,
 * the one stylesheet, a landmark structure (header, main, footer) and the
 * page's script by nonce (docs/share.md, "What a page holds to"). The title
 * names no secret, so a link preview shows nothing about it.
 */
export function Layout(props: LayoutProps) {
  const { s, root } = props;
  return (
    <>
      {DOCTYPE}
      <html lang={s.lang}>
      <PageHead product={s.product} title={props.title} root={root} />
      <body>
        <header>
          <span class="brand">{s.product}</span>
        </header>
        <main id="main">{props.children}</main>
        {props.script === undefined ? null : <script nonce={props.script.nonce} src={`${root}assets/${props.script.name}`} defer />}
      </body>
      </html>
    </>
  );
}

/**
 * The <head> of every page, share pages and console alike: language-neutral
 * metadata (no indexing, no referrer, light and dark), the title (which
 * names no secret), the one stylesheet and the icon, from `root` (the way
 * back from the page's path to the vault's root).
 */
export function PageHead(props: { product: string; title: string; root: string; children?: unknown }) {
  return (
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <meta name="robots" content="noindex, nofollow" />
      <meta name="referrer" content="no-referrer" />
      <meta name="color-scheme" content="light dark" />
      <title>{`${props.title} · ${props.product}`}</title>
      <link rel="stylesheet" href={`${props.root}assets/vault.css`} />
      <link rel="icon" href={`${props.root}assets/favicon.svg`} type="image/svg+xml" />
      {props.children}
    </head>
  );
}

/** A page that says one thing: a heading and a paragraph (404, 429). */
export function MessagePage(props: { s: Strings; root: string; title: string; lead: string }) {
  return (
    <Layout s={props.s} title={props.title} root={props.root}>
      <h1>{props.title}</h1>
      <p>{props.lead}</p>
    </Layout>
  );
}

/**
 * The card a revealed value is shown in, the share page's and the private
 * link's alike (docs/share.md, "The recipient page"; docs/requests.md): a
 * `<pre>`, not a text area, since a text area's value turns CR LF into LF
 * and the value must read back byte-exact; Copy; the line after the read;
 * then `children`. The scripts fill `#value` and `#after`.
 */
export function RevealedValue(props: { s: Strings; label: string; children?: Child }) {
  return (
    <section id="result" class="card" hidden aria-live="polite">
      <h2 id="value-label" class="label">
        {props.label}
      </h2>
      <pre id="value" class="secret" tabindex={0} aria-labelledby="value-label" />
      <button type="button" id="copy">
        {props.s.copy}
      </button>
      <p id="after" class="notice ok" />
      {props.children}
    </section>
  );
}
