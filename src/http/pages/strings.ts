/**
 * Every text the pages show, in one table per locale (docs/share.md,
 * "Locales"): a locale is added by adding a table of the same shape, without
 * touching the pages. The browser scripts get the strings they need through
 * the page (a `data-strings` JSON attribute), never from a second table.
 */
export const STRINGS_EN = {
  lang: "en",
  product: "ephemeral-vault",
  // The recipient page (/s/<id>)
  shareTitle: "A secret was shared with you",
  shareLead: "Someone sent you a secret through this link. It is shown only when you ask for it.",
  shareWarning: "Revealing it counts as one read. When no reads are left, the secret is destroyed and this link stops working.",
  readsLeftOne: "It can be revealed 1 more time.",
  readsLeftMany: "It can be revealed {n} more times.",
  readsUnlimited: "It can be revealed any number of times.",
  expiresAt: "It expires at {time}.",
  expiresNever: "It does not expire.",
  reveal: "Reveal the secret",
  revealing: "Revealing…",
  secretLabel: "The secret",
  copy: "Copy",
  copied: "Copied to the clipboard.",
  copyFailed: "Copying failed: select the text and copy it yourself.",
  goneNow: "This was its last read: the secret is now destroyed on the server. Copy it before you leave this page.",
  goneNowFile: "This was its last read: the file is now destroyed on the server. Download it before you leave this page.",
  stillThere: "The secret stays on the server: {left}",
  destroyNow: "Destroy it now",
  fileLinkHint: "This link holds a file. Its name, type and size are encrypted with it: they are shown after the reveal, with Download.",
  fileRevealedLabel: "The file",
  fileFacts: "{name} ({type}, {size})",
  fileMetaHint: "This link holds a file: {name}, {type}, {size}. Reveal it to download it.",
  fileNotShown: "The file is not shown on this page. Download it to open it with an application you trust.",
  download: "Download",
  destroyHelp: "You have it: destroy it now, so that nobody else can read it with this link.",
  destroying: "Destroying…",
  destroyedNow: "Destroyed: this link no longer works. Copy the secret before you leave this page.",
  destroyFailed: "The secret could not be destroyed: {error}",
  passphraseLabel: "Passphrase",
  passphraseHelp: "The sender protected this secret with a passphrase. Ask them for it; trying again does not use another read.",
  decrypt: "Decrypt",
  wrongPassphrase: "That passphrase does not open the secret. Try again.",
  linkNoKey: "This link is incomplete: the part after # is missing, and the secret cannot be decrypted without it.",
  linkBadKey: "This link is damaged: its key does not open the secret.",
  linkIncomplete: "This link is incomplete or damaged: the part after # is missing or cut. Ask the sender for the whole link. Nothing was read.",
  linkRefused: "This link is damaged or incomplete: the vault did not accept it. Nothing was read; check the link and try again.",
  wrongPassphraseRetry: "Wrong passphrase, try again. Nothing was read.",
  destroyedAfterRefusals: "The secret was destroyed: its sender allowed only so many wrong tries, and this was the last. Nothing was read. Ask the sender for a new link.",
  revealFailed: "The secret could not be revealed: {error}",
  notAvailableTitle: "This secret is not available",
  notAvailableLead: "It may have been revealed already, it may have expired, or the link may be wrong. Ask the sender for a new one.",
  tooManyTitle: "Too many attempts",
  // One limiter counts both (docs/share.md, "Misses and refusals"): links that name nothing, and refused reveal proofs.
  tooManyLead: "Too many tries from your address were refused: links that do not exist, or reveals with a wrong passphrase or an incomplete link. Nothing was read. Try again in a minute.",
  noscriptShare:
    "Revealing this secret needs JavaScript: it is decrypted in your browser, so the server never sees it. Without JavaScript, use the command line with this page's whole address, including the part after #:",
  // The create page (/)
  createTitle: "Share a secret",
  createLead: "Make a link that reveals a secret once, then forgets it. It is encrypted in your browser: the key stays in the link, never on the server.",
  tokenLabel: "Access token",
  tokenHelp: "A key with the write permission, or the master key. It is kept in this browser tab only.",
  tokenHelpOptional: "Optional: without a token, the link lasts at most 7 days and 10 reads.",
  valueLabel: "Secret",
  expiryLabel: "Expires after",
  readsLabel: "Reads",
  readsHelp: "How many times the link can be opened before the secret is destroyed.",
  passphraseOptionalLabel: "Passphrase (optional)",
  passphraseOptionalHelp: "At least 12 characters. The recipient must type it too. Send it another way than the link.",
  passphraseTooShort: "The passphrase must be at least 12 characters (or leave it empty).",
  fileLabel: "Or share a file",
  fileHelp: "Choose a file, or drop it on this form: at most {limit}. Its name and type are encrypted with it.",
  fileChosen: "{name} ({size}) will be shared instead of a text.",
  fileTooLarge: "This file is {size}: the limit is {limit}.",
  fileClear: "Remove the file",
  maxFailuresLabel: "Wrong tries before it is destroyed (optional)",
  maxFailuresHelp: "Destroy the secret after this many refused reveals (a wrong passphrase or a damaged link). Empty: never.",
  create: "Create the link",
  creating: "Encrypting…",
  linkLabel: "The link",
  linkHelp: "Send this link to the recipient. Anyone who has it can reveal the secret, until its reads run out.",
  qrLabel: "The link as a QR code",
  receiptLabel: "Your receipt (keep it, do not send it)",
  receiptHelp: "Keep this receipt: it tells you when the link was opened, and destroys it. It cannot read the secret, and it is shown only now. Use it with: ephemeral-vault status RECEIPT, or ephemeral-vault destroy RECEIPT.",
  copyReceipt: "Copy the receipt",
  createAnother: "Share another secret",
  createFailed: "The link could not be made: {error}",
  noscriptCreate: "Making a link needs JavaScript: the secret is encrypted in your browser. Without JavaScript, use the command line:",
  expiry5m: "5 minutes",
  expiry1h: "1 hour",
  expiry1d: "1 day",
  expiry7d: "7 days",
  expiry30d: "30 days",
  // The create page's "Ask for a secret" (docs/requests.md, "The answer page and the private link")
  askTitle: "Ask for a secret",
  askLead: "Make a link that asks someone for a secret. They answer in their browser, without an account; the answer is encrypted there to a key that only this browser makes and only you keep.",
  askDescriptionLabel: "What you ask for",
  askDescriptionHelp: "Shown to the person you ask, with the name of your access token's key. Never put the secret itself here.",
  askExpiryLabel: "Open for",
  askExpiryHelp: "How long the request waits for an answer; an answer then stays this long too.",
  askCreate: "Create request",
  askCreating: "Making the request…",
  askNeedsToken: "Asking for a secret needs an access token (a key with the write permission, or the master key): type it in the Access token field.",
  askFailed: "The request could not be made: {error}",
  askUrlLabel: "Send this link to the person who has the secret",
  askUrlHelp: "It lets them answer once. It cannot open the answer.",
  askPrivateLabel: "Keep this private link: it opens the answer; anyone with it can read the answer",
  askPrivateHelp: "It is not stored anywhere else: without it the answer cannot be opened. Do not send it to anyone.",
  askCopyUrl: "Copy the link to send",
  askCopyPrivate: "Copy the private link",
  askAnother: "Ask for another secret",
  // The answer page (/r/<id>)
  answerTitle: "Someone asks you for a secret",
  answerLead: "Your answer is encrypted in this browser before it is sent: only the person who asked can open it, not the vault.",
  askedBy: "Asked by",
  askedFor: "What they ask for",
  openUntil: "You can answer until {time}.",
  answerLabel: "Your answer",
  answerHelp: "Sent exactly as your browser gives it (line breaks as typed). It can be answered once.",
  answerSend: "Send the answer",
  answerSending: "Encrypting and sending…",
  answerSent: "Sent. Only the person who asked can open it.",
  answerTaken: "Someone already answered this request. Your answer was not stored.",
  answerTooLong: "Your answer is too long: at most {max} bytes, and it has {n}. Nothing was sent.",
  answerTooMany: "Too many tries from your address. Nothing was stored; try again in a minute.",
  answerGone: "This request is not available anymore: it expired or was deleted. Nothing was stored.",
  answerFailed: "Your answer could not be sent: {error}",
  noscriptAnswer: "Answering needs JavaScript: your answer is encrypted in your browser, so the vault never sees it.",
  requestNotAvailableTitle: "This request is not available",
  requestNotAvailableLead: "It may have been answered already, it may have expired, or the link may be wrong. Ask the person who sent it for a new one.",
  // The private link's page (/r/<id>/open)
  openTitle: "The answer to your request",
  openLead: "This private link opens the answer to a request you made. Nothing is read until you press the button; opening it counts one read.",
  openAnswer: "Open the answer",
  opening: "Opening…",
  answerValueLabel: "The answer",
  openLinkIncomplete: "This link is incomplete or damaged: the part after # is missing or cut. Nothing was sent; use the whole private link.",
  openNotYet: "Not answered yet. Nobody has answered this request so far; nothing was read.",
  openNotYetUntil: "Not answered yet. Nobody has answered this request so far; it stays open until {time}. Nothing was read.",
  openCheckAgain: "Check again",
  openMismatch: "This link does not match the request: its key is not the one the request was made with. Nothing was read.",
  openGone: "The request or its answer is gone: it expired, was deleted, or its reads ran out.",
  openBadKey: "This link's key does not open the answer.",
  openFailed: "The answer could not be opened: {error}",
  openLastRead: "This was its last read: the answer is now destroyed on the server. Copy it before you leave this page.",
  openReadsLeftOne: "The answer stays on the server: it can be opened 1 more time.",
  openReadsLeftMany: "The answer stays on the server: it can be opened {n} more times.",
  openReadsUnlimited: "The answer stays on the server until it expires.",
  noscriptOpen: "Opening the answer needs JavaScript: it is decrypted in your browser with the key after # in this link.",
  // Shared
  notFoundTitle: "Not found",
  notFoundLead: "There is no page at this address.",
} as const;

/** The shape of a locale's table: the English table's names, each a string. */
export type StringTable<T> = { readonly [K in keyof T]: string };

/** The shape of a share pages' locale table. */
export type Strings = StringTable<typeof STRINGS_EN>;

/**
 * The table for a request's `Accept-Language` header: the first listed
 * locale that has a table, else English.
 */
export const stringsFor = localePicker<Strings>({ en: STRINGS_EN }, STRINGS_EN);

/**
 * A chooser of a table of `locales` (by language) for an `Accept-Language`
 * header (`de-CH, en;q=0.5`): the first listed language (its primary subtag,
 * any case; q-values are not weighed) that has a table, else `fallback`. The
 * share pages and the console pick their tables this way (docs/share.md,
 * "Locales"; docs/console.md).
 */
export function localePicker<T>(locales: Record<string, T>, fallback: T): (acceptLanguage: string | undefined) => T {
  return (acceptLanguage) => {
    for (const part of (acceptLanguage ?? "").split(",")) {
      const tag = part.split(";")[0]?.trim().toLowerCase().split("-")[0];
      const table = tag === undefined ? undefined : locales[tag];
      if (table !== undefined) return table;
    }
    return fallback;
  };
}

/** `template` with each `{name}` replaced by `values[name]`. */
export function fill(template: string, values: Record<string, string | number>): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => (name in values ? String(values[name]) : whole));
}
