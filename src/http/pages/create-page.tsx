import { Layout } from "./layout.js";
import { scriptStrings } from "./share-page.js";
import type { Strings } from "./strings.js";

/** The expiry presets of the create page, seconds, with their labels. */
export const EXPIRY_PRESETS = [
  { seconds: 300, label: "expiry5m" },
  { seconds: 3600, label: "expiry1h" },
  { seconds: 86_400, label: "expiry1d" },
  { seconds: 604_800, label: "expiry7d" },
  { seconds: 2_592_000, label: "expiry30d" },
] as const;

/** Longest TTL and most reads of a secret made without a token (docs/share.md, "Anonymous links"). */
export const ANONYMOUS_CAPS = { ttlSeconds: 604_800, maxReads: 10 } as const;

const SCRIPT_STRINGS = [
  "create",
  "creating",
  "copied",
  "copyFailed",
  "createFailed",
  "passphraseTooShort",
  "askCreating",
  "askNeedsToken",
  "askFailed",
  "fileHelp",
  "fileChosen",
  "fileTooLarge",
] as const;

/**
 * The largest file an anonymous link carries (docs/share.md, "Files"):
 * `POST /s` keeps the 1 MiB body, so its envelope (base64url of the 1024-byte
 * metadata block, the file and the 16-byte tag, 4096 bytes left for the
 * other fields) must fit it; and never more than VAULT_MAX_FILE_BYTES.
 */
export function anonymousFileLimit(maxFileBytes: number, maxBodyBytes: number): number {
  return Math.min(maxFileBytes, Math.floor(((maxBodyBytes - 4096) * 3) / 4) - 1024 - 16);
}

/** The expiry presets of "Ask for a secret", seconds (docs/requests.md: 7 days by default, at most 30). */
export const ASK_EXPIRY_PRESETS = [
  { seconds: 86_400, label: "expiry1d" },
  { seconds: 604_800, label: "expiry7d" },
  { seconds: 2_592_000, label: "expiry30d" },
] as const;

/** The longest description of a request, in characters (docs/requests.md). */
export const ASK_DESCRIPTION_MAX = 1000;

/**
 * The create page's "Ask for a secret" (docs/requests.md, "The answer page
 * and the private link"): a description and how long the request stays
 * open; the script (src/ui/ask.ts) makes the key pair in the browser,
 * POSTs the request with the page's token and shows the link to send and
 * the private link that opens the answer, each with Copy.
 */
function AskSection(props: { s: Strings }) {
  const { s } = props;
  return (
    <section id="ask" aria-labelledby="ask-title">
      <h2 id="ask-title">{s.askTitle}</h2>
      <p>{s.askLead}</p>
      <form id="ask-form" class="card" hidden>
        <label for="ask-description">{s.askDescriptionLabel}</label>
        <span class="help" id="ask-description-help">
          {s.askDescriptionHelp}
        </span>
        <textarea id="ask-description" class="short" required maxlength={ASK_DESCRIPTION_MAX} aria-describedby="ask-description-help" />
        <label for="ask-ttl">{s.askExpiryLabel}</label>
        <span class="help" id="ask-ttl-help">
          {s.askExpiryHelp}
        </span>
        <select id="ask-ttl" aria-describedby="ask-ttl-help">
          {ASK_EXPIRY_PRESETS.map((p) => (
            <option value={String(p.seconds)} selected={p.seconds === 604_800}>
              {s[p.label]}
            </option>
          ))}
        </select>
        <button type="submit" id="ask-submit">
          {s.askCreate}
        </button>
      </form>
      <section id="ask-result" class="card" hidden aria-live="polite">
        <label for="ask-url">{s.askUrlLabel}</label>
        <span class="help" id="ask-url-help">
          {s.askUrlHelp}
        </span>
        <input type="text" id="ask-url" readonly aria-describedby="ask-url-help" />
        <button type="button" id="ask-copy-url">
          {s.askCopyUrl}
        </button>
        <label for="ask-private">{s.askPrivateLabel}</label>
        <span class="help" id="ask-private-help">
          {s.askPrivateHelp}
        </span>
        <input type="text" id="ask-private" readonly aria-describedby="ask-private-help" />
        <button type="button" id="ask-copy-private">
          {s.askCopyPrivate}
        </button>
        <button type="button" id="ask-again" class="secondary">
          {s.askAnother}
        </button>
      </section>
      <p id="ask-status" role="status" aria-live="polite" />
      <p id="ask-error" class="notice error" role="alert" hidden />
    </section>
  );
}

/**
 * GET / (docs/share.md, "The create page"): value, expiry, reads and an
 * optional passphrase; the script (src/ui/create.ts) encrypts the value in
 * the browser, stores the envelope as a public secret (POST /secrets with
 * the token the person typed, kept in sessionStorage only, or POST /s when
 * anonymous creation is on) and shows the link, a Copy button and a QR code,
 * and the sender's receipt with its own Copy (docs/share.md, "Receipts").
 * Or a file instead of the value (picked or dropped on the form; docs/share.md,
 * "Files"): `maxFileBytes` (VAULT_MAX_FILE_BYTES) and `anonymousFileBytes`
 * (without a token) are the limits the script shows and checks before it
 * encrypts anything.
 * Below it, "Ask for a secret" (AskSection), which uses the same token.
 */
export function CreatePage(props: { s: Strings; root: string; nonce: string; anonymous: boolean; maxFileBytes: number; anonymousFileBytes: number }) {
  const { s, anonymous } = props;
  return (
    <Layout s={s} title={s.createTitle} root={props.root} script={{ name: "create.js", nonce: props.nonce }}>
      <div
        id="create"
        data-strings={scriptStrings(s, SCRIPT_STRINGS)}
        data-anonymous={anonymous ? "true" : "false"}
        data-max-file-bytes={String(props.maxFileBytes)}
        data-anonymous-file-bytes={String(props.anonymousFileBytes)}
      >
        <h1>{s.createTitle}</h1>
        <p>{s.createLead}</p>
        <noscript>
          <p>{s.noscriptCreate}</p>
          <pre>
            <code>ephemeral-vault share --ttl 1d &lt; secret.txt</code>
          </pre>
        </noscript>
        {/* One token for both forms (kept in sessionStorage): a field of the create form (form=), which Ask for a secret reads too. */}
        <div id="token-card" class="card" hidden>
          <label for="token">{s.tokenLabel}</label>
          <span class="help" id="token-help">
            {anonymous ? s.tokenHelpOptional : s.tokenHelp}
          </span>
          <input type="password" id="token" form="create-form" autocomplete="off" aria-describedby="token-help" required={!anonymous} />
        </div>
        <form id="create-form" class="card" hidden>
          <label for="value">{s.valueLabel}</label>
          <textarea id="value" required spellcheck={false} />
          {/* A file instead of the value (docs/share.md, "Files"): picked here or dropped anywhere on the form; the script fills in the limit. */}
          <div id="file-card" class="file">
            <label for="file">{s.fileLabel}</label>
            <span class="help" id="file-help" />
            <input type="file" id="file" aria-describedby="file-help" />
            <p id="file-chosen" class="notice ok" hidden />
            <button type="button" id="file-clear" class="secondary" hidden>
              {s.fileClear}
            </button>
          </div>
          <div class="row">
            <div>
              <label for="ttl">{s.expiryLabel}</label>
              <select id="ttl">
                {EXPIRY_PRESETS.map((p) => (
                  <option value={String(p.seconds)} selected={p.seconds === 86_400} data-anonymous={p.seconds <= ANONYMOUS_CAPS.ttlSeconds ? "true" : "false"}>
                    {s[p.label]}
                  </option>
                ))}
              </select>
            </div>
            <div>
              <label for="reads">{s.readsLabel}</label>
              <input type="number" id="reads" value="1" min="1" max={anonymous ? String(ANONYMOUS_CAPS.maxReads) : "1000"} step="1" aria-describedby="reads-help" />
              <span class="help" id="reads-help">
                {s.readsHelp}
              </span>
            </div>
          </div>
          <label for="passphrase">{s.passphraseOptionalLabel}</label>
          <span class="help" id="passphrase-help">
            {s.passphraseOptionalHelp}
          </span>
          <input type="password" id="passphrase" autocomplete="new-password" minlength={12} aria-describedby="passphrase-help" />
          <label for="max-failures">{s.maxFailuresLabel}</label>
          <span class="help" id="max-failures-help">
            {s.maxFailuresHelp}
          </span>
          <input type="number" id="max-failures" min="1" max="1000" step="1" aria-describedby="max-failures-help" />
          <button type="submit" id="submit">
            {s.create}
          </button>
        </form>
        <section id="result" class="card" hidden aria-live="polite">
          <label for="link">{s.linkLabel}</label>
          <span class="help" id="link-help">
            {s.linkHelp}
          </span>
          <input type="text" id="link" readonly aria-describedby="link-help" />
          <button type="button" id="copy">
            {s.copy}
          </button>
          <canvas id="qr" class="qr" role="img" aria-label={s.qrLabel} />
          <div class="receipt" id="receipt-card">
            {/* The sender's receipt (docs/share.md, "Receipts"): not part of the link; it cannot read the secret. */}
            <label for="receipt">{s.receiptLabel}</label>
            <span class="help" id="receipt-help">
              {s.receiptHelp}
            </span>
            <input type="text" id="receipt" readonly aria-describedby="receipt-help" />
            <button type="button" id="copy-receipt">
              {s.copyReceipt}
            </button>
          </div>
          <button type="button" id="again" class="secondary">
            {s.createAnother}
          </button>
        </section>
        <p id="status" role="status" aria-live="polite" />
        <p id="error" class="notice error" role="alert" hidden />
        <AskSection s={s} />
      </div>
    </Layout>
  );
}
