import { Layout, RevealedValue } from "./layout.js";
import { fill } from "./strings.js";
import type { Strings } from "./strings.js";

/** What the recipient page shows before the reveal: what HEAD knows, never the value. */
export interface ShareFacts {
  /** Unix seconds, or null for no TTL. */
  expiresAt: number | null;
  /** Reads left, or null for no read limit. */
  readsLeft: number | null;
}

/** The texts the share script needs, passed in the page (data-strings). */
const SCRIPT_STRINGS = [
  "revealing",
  "reveal",
  "copied",
  "copyFailed",
  "goneNow",
  "goneNowFile",
  "stillThere",
  "readsLeftOne",
  "readsLeftMany",
  "readsUnlimited",
  "wrongPassphrase",
  "linkNoKey",
  "linkBadKey",
  "linkIncomplete",
  "linkRefused",
  "wrongPassphraseRetry",
  "destroyedAfterRefusals",
  "revealFailed",
  "notAvailableTitle",
  "notAvailableLead",
  "tooManyTitle",
  "tooManyLead",
  "destroying",
  "destroyedNow",
  "destroyFailed",
  "fileFacts",
  "fileMetaHint",
] as const;

/** `strings` narrowed to `names`, as JSON for a data attribute. */
export function scriptStrings(s: Strings, names: readonly (keyof Strings)[]): string {
  return JSON.stringify(Object.fromEntries(names.map((n) => [n, s[n]])));
}

/** `readsLeft` in words. */
export function readsLeftText(s: Strings, readsLeft: number | null): string {
  if (readsLeft === null) return s.readsUnlimited;
  return readsLeft === 1 ? s.readsLeftOne : fill(s.readsLeftMany, { n: readsLeft });
}

/** Unix seconds as `YYYY-MM-DD HH:MM UTC` (the script shows the reader's local time instead). */
function utc(seconds: number): string {
  return `${new Date(seconds * 1000).toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

/**
 * GET /s/<id> while the secret is there (docs/share.md, "The recipient
 * page"): its expiry and reads left, and a Reveal button that the script
 * (src/ui/share.ts) turns into one POST /s/<id>/reveal. The page itself
 * reads nothing: loading it any number of times changes nothing. After a
 * reveal that left reads over, "Destroy it now" (POST /s/<id>/destroy with
 * the same proof) ends it (docs/share.md, "Receipts").
 * `needsProof`: the secret was made with a reveal check, so the script
 * offers Reveal only for a link key of the right shape (docs/share.md,
 * "The reveal proof"). `fileMeta`: the `file_meta` the secret was made
 * with, ciphertext in a data attribute that the script opens with the link
 * key to show the file's name, type and size before the reveal
 * (docs/share.md, "The file's metadata before the reveal").
 */
export function SharePage(props: { s: Strings; root: string; nonce: string; facts: ShareFacts; cli: string; needsProof?: boolean; fileMeta?: string | undefined }) {
  const { s, facts } = props;
  return (
    <Layout s={s} title={s.shareTitle} root={props.root} script={{ name: "share.js", nonce: props.nonce }}>
      <div id="share" data-strings={scriptStrings(s, SCRIPT_STRINGS)} data-needs-proof={props.needsProof === true ? "true" : "false"} data-file-meta={props.fileMeta}>
        <h1>{s.shareTitle}</h1>
        <p>{s.shareLead}</p>
        <div class="card" id="facts">
          <p id="reads-left">{readsLeftText(s, facts.readsLeft)}</p>
          <p id="expiry">
            {facts.expiresAt === null ? (
              s.expiresNever
            ) : (
              <>
                {s.expiresAt.split("{time}")[0]}
                <time id="expires" datetime={new Date(facts.expiresAt * 1000).toISOString()}>
                  {utc(facts.expiresAt)}
                </time>
                {s.expiresAt.split("{time}")[1] ?? ""}
              </>
            )}
          </p>
          {/* Shown by the script when the fragment says the link holds a file (`.f`, docs/share.md "Links"); the vault never sees it. With a file_meta that opens under the link key, the script puts the file's name, type and size here. */}
          <p id="file-hint" hidden>
            {s.fileLinkHint}
          </p>
          <p id="share-warning" class="notice warn">
            {s.shareWarning}
          </p>
          <button type="button" id="reveal" hidden>
            {s.reveal}
          </button>
          <noscript>
            <p>{s.noscriptShare}</p>
            <pre>
              <code>{props.cli}</code>
            </pre>
          </noscript>
        </div>
        <form id="passphrase-form" class="card" hidden>
          <label for="passphrase">{s.passphraseLabel}</label>
          <span class="help" id="passphrase-help">
            {s.passphraseHelp}
          </span>
          <input type="password" id="passphrase" autocomplete="off" aria-describedby="passphrase-help" />
          <button type="submit" id="decrypt">
            {s.decrypt}
          </button>
        </form>
        <RevealedValue s={s} label={s.secretLabel}>
          {/* A file (docs/share.md, "Files"): its name, type and size, and Download; its content is never shown here. */}
          <div id="file-result" hidden>
            <h2 id="file-label" class="label">
              {s.fileRevealedLabel}
            </h2>
            <p id="file-facts" />
            <p class="help" id="file-help">
              {s.fileNotShown}
            </p>
            <button type="button" id="download" aria-describedby="file-help">
              {s.download}
            </button>
          </div>
          {/* After a read that left reads over: the link holder may destroy what they could read (docs/share.md, "Receipts"). */}
          <div id="destroy-card" hidden>
            <p class="help" id="destroy-help">
              {s.destroyHelp}
            </p>
            <button type="button" id="destroy" class="secondary" aria-describedby="destroy-help">
              {s.destroyNow}
            </button>
          </div>
        </RevealedValue>
        <p id="status" role="status" aria-live="polite" />
        <p id="error" class="notice error" role="alert" hidden />
      </div>
    </Layout>
  );
}
