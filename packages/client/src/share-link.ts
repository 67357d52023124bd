import { EnvelopeError, openEnvelopeContent, parseEnvelope, prepareReveal } from "./envelope.js";
import type { Opened, PreparedReveal } from "./envelope.js";
import { VaultApiError } from "./errors.js";
import type { Transport } from "./http.js";

/** A share link taken apart (docs/share.md, "Links"). */
export interface ShareLink {
  /** The vault's base address: everything before `/s/<id>` (or `/secrets/<id>`). */
  base: string;
  /** The public secret's 64-hex id. */
  id: string;
  /** `page`: `/s/<id>`, read through POST /s/<id>/reveal without a token; `api`: `/secrets/<id>`, read with a token. */
  kind: "page" | "api";
  /** The fragment's link key, or undefined when the link has none (a plain link). */
  linkKey: string | undefined;
  /** The fragment has `.p` after the key: the link was made with a passphrase, which opening it will need. */
  needsPassphrase: boolean;
  /**
   * The fragment has `.f` after the key (and after `.p`): the link was made
   * to a file (docs/share.md, "Links"), so a tool can settle where the bytes
   * go before spending the read. A hint only: what the envelope holds decides.
   */
  holdsFile: boolean;
}

/**
 * The fragment of an end-to-end link (docs/share.md, "Links"): the
 * 43-character link key, then `.p` when the envelope also needs a
 * passphrase, then `.f` when it holds a file. Both are hints, so that a tool
 * can ask for the passphrase, or settle where a file goes, before the read;
 * the envelope itself decides. Each is its own `.`-separated part, so a
 * reader that knows only `.p` still finds it second.
 * @param file true for a file envelope (version 3); default false.
 */
export function linkFragment(linkKey: string, passphrase: boolean, file = false): string {
  return `${linkKey}${passphrase ? ".p" : ""}${file ? ".f" : ""}`;
}

const LINK = /^(.*)\/(s|secrets)\/([0-9a-f]{64})\/?$/;

/**
 * Parses a share link: `BASE/s/<id>[#<key>]` (what share() and the create
 * page make) or `BASE/secrets/<id>` (a plain API-made link).
 * @returns the parts, or undefined when `text` is not such a link.
 */
export function parseShareLink(text: string): ShareLink | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
  const m = LINK.exec(url.origin + url.pathname);
  if (m === null) return undefined;
  const [key = "", ...hints] = decodeURIComponent(url.hash.replace(/^#/, "")).split(".");
  return {
    base: m[1] ?? "",
    id: m[3] ?? "",
    kind: m[2] === "s" ? "page" : "api",
    linkKey: key === "" ? undefined : key,
    needsPassphrase: hints.includes("p"),
    holdsFile: hints.includes("f"),
  };
}

/**
 * Reveals a share link: one read (it counts, and may burn the secret), then
 * the envelope opened with the link's key (and `passphrase` when it has one).
 * A `/s/` link is read through the recipient page's reveal (no token needed:
 * the id is the capability) at the link's own address; a `/secrets/` link
 * through the API with `api` (which carries the token).
 * A `/s/` link with a key sends its reveal proof (docs/share.md, "The
 * reveal proof"): a vault that refuses it (403) spent no read, and the
 * EnvelopeError says so (`readSpent` false).
 * @param reveal sends POST `<base>/s/<id>/reveal` with `{proof}`; `api` GETs `/secrets/<id>`.
 * @returns the value, or `{file}` for a link to a file (docs/share.md, "Files").
 * @throws VaultApiError 404 when the secret is gone; EnvelopeError when the
 *   link has no key for an envelope, the key is wrong, or the passphrase is
 *   missing or wrong.
 */
export async function revealLink(
  link: ShareLink,
  reveal: (base: string, id: string, proof: string | undefined) => Promise<{ value: string }>,
  api: Transport,
  passphrase: string | undefined,
): Promise<Opened> {
  // The proof is derived before the read (docs/share.md, "The reveal proof"): a key of the wrong shape spends nothing.
  let prepared: PreparedReveal | undefined;
  if (link.linkKey !== undefined && link.kind === "page") {
    if (link.needsPassphrase && (passphrase === undefined || passphrase === "")) {
      throw new EnvelopeError("passphrase", "this link needs its passphrase", { readSpent: false });
    }
    prepared = await prepareReveal(link.linkKey, link.needsPassphrase ? passphrase : undefined);
  }
  let body: { value: string };
  try {
    body =
      link.kind === "page"
        ? await reveal(link.base, link.id, prepared?.proof)
        : await api.json<{ value: string }>({ method: "GET", path: `/secrets/${link.id}`, idempotent: true });
  } catch (err) {
    if (err instanceof VaultApiError && err.status === 403 && link.kind === "page") {
      throw link.needsPassphrase && link.linkKey !== undefined
        ? new EnvelopeError("passphrase", "wrong passphrase; nothing was read, try again", { readSpent: false })
        : new EnvelopeError("key", "this link is damaged or incomplete; nothing was read", { readSpent: false });
    }
    throw err;
  }
  const env = parseEnvelope(body.value);
  if (env === undefined || link.linkKey === undefined) {
    if (env !== undefined) throw new EnvelopeError("key", "the link has no key (the part after #): the secret is encrypted and cannot be opened");
    return body.value;
  }
  return prepared !== undefined ? prepared.openContent(env) : openEnvelopeContent(env, link.linkKey, passphrase);
}
