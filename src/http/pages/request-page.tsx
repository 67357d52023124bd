import { Layout, RevealedValue } from "./layout.js";
import { scriptStrings } from "./share-page.js";
import type { Strings } from "./strings.js";

/** What the answer page shows of an open request. `expiresAt` in Unix seconds. */
export interface AnswerFacts {
  description: string;
  /** The name of the key or principal that asked (never a token). */
  asker: string;
  /** The asker's P-256 point, base64url: only ever in the page's data attribute, for the script. */
  publicKey: string;
  expiresAt: number;
}

/** The texts the answer page's script needs (data-strings). */
const ANSWER_STRINGS = ["answerSend", "answerSending", "answerSent", "answerTaken", "answerTooLong", "answerTooMany", "answerGone", "answerFailed"] as const;

/** The texts the private link page's script needs (data-strings). */
const OPEN_STRINGS = [
  "openAnswer",
  "opening",
  "openLinkIncomplete",
  "openNotYet",
  "openNotYetUntil",
  "openMismatch",
  "openGone",
  "openBadKey",
  "openFailed",
  "openLastRead",
  "openReadsLeftOne",
  "openReadsLeftMany",
  "openReadsUnlimited",
  "copied",
  "copyFailed",
  "tooManyTitle",
  "tooManyLead",
] as const;

/** Unix seconds as `YYYY-MM-DD HH:MM UTC` (the script shows the reader's local time instead). */
function utc(seconds: number): string {
  return `${new Date(seconds * 1000).toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

/**
 * GET /r/<id> while the request is open (docs/requests.md, "The answer page
 * and the private link"): who asked, what for, until when it is open, a text
 * area and Send. The script (src/ui/request.ts) encrypts the text to
 * `facts.publicKey` in the browser and posts it to POST /r/<id>/answer; the
 * page itself reads and changes nothing. `maxValueBytes` (VAULT_MAX_VALUE_BYTES)
 * lets the script refuse a too long answer before sending it.
 */
export function AnswerPage(props: { s: Strings; root: string; nonce: string; facts: AnswerFacts; maxValueBytes: number }) {
  const { s, facts } = props;
  const [before, after] = s.openUntil.split("{time}");
  return (
    <Layout s={s} title={s.answerTitle} root={props.root} script={{ name: "request.js", nonce: props.nonce }}>
      <div id="answer-page" data-strings={scriptStrings(s, ANSWER_STRINGS)} data-public-key={facts.publicKey} data-max-bytes={String(props.maxValueBytes)}>
        <h1>{s.answerTitle}</h1>
        <p>{s.answerLead}</p>
        <dl class="card request-facts" id="facts">
          <dt>{s.askedBy}</dt>
          <dd id="asker">{facts.asker}</dd>
          <dt>{s.askedFor}</dt>
          <dd id="description" class="description">
            {facts.description}
          </dd>
        </dl>
        <p id="expiry">
          {before}
          <time id="expires" datetime={new Date(facts.expiresAt * 1000).toISOString()}>
            {utc(facts.expiresAt)}
          </time>
          {after ?? ""}
        </p>
        <noscript>
          <p class="notice warn">{s.noscriptAnswer}</p>
        </noscript>
        <form id="answer-form" class="card" hidden>
          <label for="answer">{s.answerLabel}</label>
          <span class="help" id="answer-help">
            {s.answerHelp}
          </span>
          <textarea id="answer" required spellcheck={false} autocomplete="off" aria-describedby="answer-help" />
          <button type="submit" id="send">
            {s.answerSend}
          </button>
        </form>
        <p id="sent" class="notice ok" tabindex={-1} hidden>
          {s.answerSent}
        </p>
        <p id="status" role="status" aria-live="polite" />
        <p id="error" class="notice error" role="alert" hidden />
      </div>
    </Layout>
  );
}

/**
 * GET /r/<id>/open, the private link's page (docs/requests.md, "The answer
 * page and the private link"): it looks nothing up. Its script
 * (src/ui/request-open.ts) takes the private key from the fragment, and on
 * Open the answer posts the reveal proof to POST /r/<id>/reveal (one read)
 * and decrypts the answer in the browser, so a link preview spends nothing.
 */
export function OpenPage(props: { s: Strings; root: string; nonce: string }) {
  const { s } = props;
  return (
    <Layout s={s} title={s.openTitle} root={props.root} script={{ name: "request-open.js", nonce: props.nonce }}>
      <div id="open-page" data-strings={scriptStrings(s, OPEN_STRINGS)}>
        <h1>{s.openTitle}</h1>
        <p id="open-lead">{s.openLead}</p>
        <noscript>
          <p class="notice warn">{s.noscriptOpen}</p>
        </noscript>
        <button type="button" id="open" hidden>
          {s.openAnswer}
        </button>
        <button type="button" id="check-again" class="secondary" hidden>
          {s.openCheckAgain}
        </button>
        <RevealedValue s={s} label={s.answerValueLabel} />
        <p id="status" role="status" aria-live="polite" />
        <p id="error" class="notice error" role="alert" hidden />
      </div>
    </Layout>
  );
}
