import { EnvelopeError, needsPassphrase, openEnvelope, parseEnvelope } from "@ephemeral-vault/client";
import type { EnvelopeV1 } from "@ephemeral-vault/client";
import { apiFailure, byId, copyText, fill, pageStrings, setStatus, showError } from "./dom.js";

/**
 * The recipient page's script (GET /s/<id>, docs/share.md): the Reveal
 * button makes the one read (POST /s/<id>/reveal), the fragment's key opens
 * the envelope in this browser, and the fragment is then removed from the
 * address bar. A wrong passphrase is retried against the ciphertext kept in
 * memory, without another read.
 */
const root = byId("share");
const S = pageStrings(root);
// The link key: everything after '#'. Kept in memory only; the address bar loses it after the reveal.
// A ".p" after it says the link was made with a passphrase (docs/share.md, "Links").
const linkKey = decodeURIComponent(location.hash.replace(/^#/, "")).split(".")[0] ?? "";
const revealButton = byId<HTMLButtonElement>("reveal");
const result = byId("result");
const valueField = byId("value");
const passForm = byId<HTMLFormElement>("passphrase-form");
const passInput = byId<HTMLInputElement>("passphrase");
let shown = "";

const expires = document.getElementById("expires");
if (expires instanceof HTMLTimeElement && expires.dateTime !== "") {
  expires.textContent = new Date(expires.dateTime).toLocaleString();
}
revealButton.hidden = false;

function readsLeftText(left: number | null): string {
  if (left === null) return S.readsUnlimited ?? "";
  return left === 1 ? (S.readsLeftOne ?? "") : fill(S.readsLeftMany ?? "", { n: left });
}

function show(value: string, afterText: string): void {
  shown = value;
  passForm.hidden = true;
  valueField.textContent = value;
  byId("after").textContent = afterText;
  result.hidden = false;
  valueField.focus();
}

async function open(env: EnvelopeV1, afterText: string, passphrase?: string): Promise<void> {
  try {
    show(await openEnvelope(env, linkKey, passphrase), afterText);
    showError(undefined);
  } catch (err) {
    if (err instanceof EnvelopeError && err.reason === "passphrase" && passphrase !== undefined) {
      showError(S.wrongPassphrase);
      passInput.select();
    } else {
      showError(S.linkBadKey);
    }
  }
}

revealButton.addEventListener("click", async () => {
  revealButton.disabled = true;
  setStatus(S.revealing ?? "");
  showError(undefined);
  let res: Response;
  try {
    res = await fetch(`${location.pathname.replace(/\/+$/, "")}/reveal`, {
      method: "POST",
      headers: { Accept: "application/json" },
      credentials: "omit",
      cache: "no-store",
    });
  } catch (err) {
    revealButton.disabled = false;
    setStatus("");
    showError(fill(S.revealFailed ?? "", { error: String(err) }));
    return;
  }
  // The key has done its work once the read is made: out of the address bar and the history entry.
  history.replaceState(null, "", location.pathname + location.search);
  setStatus("");
  if (!res.ok) {
    if (res.status === 404) {
      revealButton.hidden = true;
      byId("reads-left").textContent = "";
      showError(`${S.notAvailableTitle}. ${S.notAvailableLead}`);
    } else {
      revealButton.disabled = false;
      showError(fill(S.revealFailed ?? "", { error: await apiFailure(res) }));
    }
    return;
  }
  const body = (await res.json()) as { value: string; read_count: number; max_reads: number | null };
  revealButton.hidden = true;
  const left = body.max_reads === null ? null : Math.max(0, body.max_reads - body.read_count);
  const afterText = left === 0 ? (S.goneNow ?? "") : fill(S.stillThere ?? "", { left: readsLeftText(left) });
  byId("reads-left").textContent = left === 0 ? "" : readsLeftText(left);
  const env = parseEnvelope(body.value);
  if (env === undefined) {
    show(body.value, afterText);
  } else if (linkKey === "") {
    showError(S.linkNoKey);
  } else if (needsPassphrase(env)) {
    passForm.hidden = false;
    passInput.focus();
    passForm.addEventListener("submit", (event) => {
      event.preventDefault();
      void open(env, afterText, passInput.value);
    });
  } else {
    await open(env, afterText);
  }
});

byId("copy").addEventListener("click", () => void copyText(shown, valueField, S));
