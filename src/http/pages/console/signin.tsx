import type { ConsoleStrings } from "../console-strings.js";
import { DOCTYPE, PageHead } from "../layout.js";


/**
 * The sign-in page (docs/console.md, "Signing in"): one password field for
 * the token, posted to /ui/login; the token never reaches the browser's
 * storage (no script, autocomplete off).
 */
export function SignInPage(props: {
  s: ConsoleStrings;
  root: string;
  notice?: { kind: "ok" | "error"; text: string } | undefined;
  /** The identity provider's name when single sign-on is on (docs/sso.md): a "Sign in with" link first. */
  provider?: string | undefined;
  /** VAULT_CONSOLE_TOKEN_SIGNIN=false: the token form is for the master key and scoped keys only. */
  peopleOff?: boolean | undefined;
}) {
  const { s } = props;
  const lead = props.provider === undefined ? s.signInLead : props.peopleOff === true ? s.ssoOrLead : s.ssoTokenLead;
  return (
    <>
    {DOCTYPE}
    <html lang={s.lang}>
      <PageHead product={s.product} root={props.root} title={s.signInTitle} />
      <body>
        <header>
          <span class="brand">{s.product}</span>
        </header>
        <main id="main">
          <h1>{s.signInTitle}</h1>
          {props.notice === undefined ? null : (
            <div class={`notice ${props.notice.kind}`} role={props.notice.kind === "error" ? "alert" : "status"}>
              {props.notice.text}
            </div>
          )}
          {props.provider === undefined ? null : (
            <section class="card" aria-labelledby="sso-heading">
              <h2 id="sso-heading">{s.ssoSignIn.replace("{provider}", props.provider)}</h2>
              <p>{s.ssoLead.replace("{provider}", props.provider)}</p>
              <p>
                <a class="button-link" href={`${props.root}ui/oidc/login`}>
                  {s.ssoSignIn.replace("{provider}", props.provider)}
                </a>
              </p>
            </section>
          )}
          {props.provider === undefined ? null : <h2>{s.ssoOr}</h2>}
          <p>{lead}</p>
          <form method="post" action={`${props.root}ui/login`} class="card">
            <label for="token">{s.tokenLabel}</label>
            <input id="token" name="token" type="password" autocomplete="off" required spellcheck={false} />
            <button type="submit">{s.signIn}</button>
          </form>
        </main>
      </body>
    </html>
    </>
  );
}

/** A console page that says one thing (a refused cross-site request, an unknown page). */
export function MessageView(props: { s: ConsoleStrings; root: string; title: string; lead: string }) {
  return (
    <>
    {DOCTYPE}
    <html lang={props.s.lang}>
      <PageHead product={props.s.product} root={props.root} title={props.title} />
      <body>
        <header>
          <span class="brand">{props.s.product}</span>
        </header>
        <main id="main">
          <h1>{props.title}</h1>
          <p>{props.lead}</p>
          <p>
            <a href={`${props.root}ui/login`}>{props.s.signInTitle}</a>
          </p>
        </main>
      </body>
    </html>
    </>
  );
}
