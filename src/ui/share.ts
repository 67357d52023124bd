import { EnvelopeError, isLinkKey, needsPassphrase, openEnvelopeContent, openFileMeta, parseEnvelope, prepareReveal, safeFileName } from "@ephemeral-vault/client";
import type { EnvelopeV1, Opened, PreparedReveal, SharedFile } from "@ephemeral-vault/client";
import { apiFailure, byId, copyText, fill, formatBytes, pageStrings, setStatus, showError } from "./dom.js";

/**
 * The recipient page's script (GET /s/<id>, docs/share.md): the Reveal
 * button makes the one read (POST /s/<id>/reveal), the fragment's key opens
 * the envelope in this browser, and the fragment is then removed from the
 * address bar. A wrong passphrase is retried against the ciphertext kept in
 * memory, without another read. After a read that left reads over,
 * "Destroy it now" ends the secret with the same proof (docs/share.md, "Receipts").
 * A file (docs/share.md, "Files") is never rendered: its name (made safe),
 * type and size are shown, and Download saves it (a Blob of type
 * application/octet-stream behind an object URL, with the `download` name).
 */
const root = byId("share");
const S = pageStrings(root);
// The link key: everything after '#'. Kept in memory only; the address bar loses it after the reveal.
// A ".p" after it says the link was made with a passphrase (docs/share.md, "Links").
const fragment = decodeURIComponent(location.hash.replace(/^#/, ""));
const linkKey = fragment.split(".")[0] ?? "";
const passHint = fragment.split(".").slice(1).includes("p");
// A ".f" after it says the link holds a file: said before the reveal (the name, type and size only after it).
const fileHint = fragment.split(".").slice(1).includes("f");
// The secret was made with a reveal check (docs/share.md, "The reveal proof"): only the whole link can read it.
const needsProof = root.dataset.needsProof === "true";
const revealButton = byId<HTMLButtonElement>("reveal");
const result = byId("result");
const valueField = byId("value");
const passForm = byId<HTMLFormElement>("passphrase-form");
const passInput = byId<HTMLInputElement>("passphrase");
// The passphrase form's own button opens a kept ciphertext after the read; before it, Reveal is the one button.
const decryptButton = byId<HTMLButtonElement>("decrypt");
let shown = "";

const expires = document.getElementById("expires");
if (expires instanceof HTMLTimeElement && expires.dateTime !== "") {
  expires.textContent = new Date(expires.dateTime).toLocaleString();
}
// Checked before Reveal is offered: a key of the wrong shape, or none where one is needed, would spend nothing but show nothing.
const incomplete = (fragment !== "" && !isLinkKey(linkKey)) || (needsProof && linkKey === "");
if (incomplete) {
  byId("share-warning").hidden = true;
  showError(S.linkIncomplete);
} else {
  byId("file-hint").hidden = !fileHint;
  showFileMeta();
  revealButton.hidden = false;
  // A passphrase link asks for it before the read: the proof needs it; Enter in the field is Reveal.
  if (passHint) {
    passForm.hidden = false;
    decryptButton.hidden = true;
    // Reveal below the field it needs, in reading order (a type="button": its click, not the form's submit, reveals).
    passForm.append(revealButton);
  }
}
let prepared: PreparedReveal | undefined;

/**
 * A file link made with `file_meta` (docs/share.md, "The file's metadata
 * before the reveal"): its name (made safe), type and size, opened with the
 * link key, shown as text before the reveal. One that does not open leaves
 * the page as it was.
 */
function showFileMeta(): void {
  const field = root.dataset.fileMeta;
  if (field === undefined || field === "" || linkKey === "") return;
  void openFileMeta(field, linkKey).then((meta) => {
    if (meta === undefined) return;
    const hint = byId("file-hint");
    hint.textContent = fill(S.fileMetaHint ?? "", { name: safeFileName(meta.name), type: meta.type, size: formatBytes(meta.size) });
    hint.hidden = false;
  });
}

function readsLeftText(left: number | null): string {
  if (left === null) return S.readsUnlimited ?? "";
  return left === 1 ? (S.readsLeftOne ?? "") : fill(S.readsLeftMany ?? "", { n: left });
}

function show(value: string, afterText: string): void {
  shown = value;
  passForm.hidden = true;
  // Only what is true after the reveal: no warning about a read to come, no expiry above "this was its last read".
  byId("facts").hidden = true;
  valueField.textContent = value;
  byId("after").textContent = afterText;
  result.hidden = false;
  valueField.focus();
}

/** The opened file's object URL, made once at the reveal (Download saves it; the page never renders it). */
let fileUrl: string | undefined;

function showFile(file: SharedFile, afterText: string): void {
  const name = safeFileName(file.name);
  passForm.hidden = true;
  byId("facts").hidden = true;
  // No text to show or copy: the file's card instead.
  for (const id of ["value-label", "value", "copy"]) byId(id).hidden = true;
  byId("file-facts").textContent = fill(S.fileFacts ?? "", { name, type: file.type, size: formatBytes(file.bytes.length) });
  // application/octet-stream, whatever the sender said: the browser saves it and never displays it.
  fileUrl = URL.createObjectURL(new Blob([file.bytes as Uint8Array<ArrayBuffer>], { type: "application/octet-stream" }));
  const download = byId<HTMLButtonElement>("download");
  download.onclick = () => {
    const a = document.createElement("a");
    a.href = fileUrl ?? "";
    a.download = name;
    a.rel = "noopener";
    document.body.append(a);
    a.click();
    a.remove();
  };
  byId("file-result").hidden = false;
  byId("after").textContent = afterText;
  result.hidden = false;
  download.focus();
}

function showOpened(opened: Opened, afterText: string): void {
  if (typeof opened === "string") show(opened, afterText);
  else showFile(opened.file, afterText);
}

async function open(env: EnvelopeV1, afterText: string, passphrase?: string): Promise<void> {
  try {
    showOpened(await (prepared !== undefined && env.v !== 1 ? prepared.openContent(env) : openEnvelopeContent(env, linkKey, passphrase)), afterText);
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

/** Whether this page's secret is still there: a GET of the page, which reads nothing; false only for a 404. */
async function stillThere(): Promise<boolean> {
  try {
    const res = await fetch(location.pathname, { method: "GET", credentials: "omit", cache: "no-store" });
    return res.status !== 404;
  } catch {
    return true;
  }
}

async function revealNow(): Promise<void> {
  if (passHint && passInput.value === "") {
    showError(S.wrongPassphrase);
    passInput.focus();
    return;
  }
  revealButton.disabled = true;
  setStatus(S.revealing ?? "");
  showError(undefined);
  let res: Response;
  try {
    prepared = linkKey === "" ? undefined : await prepareReveal(linkKey, passHint ? passInput.value : undefined);
    const headers: Record<string, string> = { Accept: "application/json" };
    if (prepared !== undefined) headers["Content-Type"] = "application/json";
    res = await fetch(`${location.pathname.replace(/\/+$/, "")}/reveal`, {
      method: "POST",
      headers,
      ...(prepared === undefined ? {} : { body: JSON.stringify({ proof: prepared.proof }) }),
      credentials: "omit",
      cache: "no-store",
    });
  } catch (err) {
    revealButton.disabled = false;
    setStatus("");
    showError(fill(S.revealFailed ?? "", { error: String(err) }));
    return;
  }
  setStatus("");
  if (res.status === 403) {
    // Refused before any read. The refusal that reaches the sender's max_failed_reveals destroys the
    // secret (docs/share.md, "The reveal proof"): the page, which reads nothing, says whether it is still there.
    if (!(await stillThere())) {
      revealButton.hidden = true;
      passForm.hidden = true;
      // Only what is true now: no warning about a read to come, no expiry of a secret that is gone.
      byId("facts").hidden = true;
      showError(S.destroyedAfterRefusals);
      return;
    }
    // Still there: the person may try again, without reloading.
    revealButton.disabled = false;
    showError(passHint ? S.wrongPassphraseRetry : S.linkRefused);
    if (passHint) passInput.select();
    return;
  }
  if (res.status === 429) {
    // The share pages' limiter (misses and refused proofs): nothing was read, so the link stays whole for a later try.
    revealButton.disabled = false;
    showError(`${S.tooManyTitle}. ${S.tooManyLead}`);
    return;
  }
  // The key has done its work once the read is made: out of the address bar and the history entry.
  history.replaceState(null, "", location.pathname + location.search);
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
  const env = parseEnvelope(body.value);
  // A file (envelope version 3) is downloaded, not copied: the last read's notice says so.
  const goneNow = env?.v === 3 ? S.goneNowFile : S.goneNow;
  const afterText = left === 0 ? (goneNow ?? "") : fill(S.stillThere ?? "", { left: readsLeftText(left) });
  byId("reads-left").textContent = left === 0 ? "" : readsLeftText(left);
  // Reads left over: whoever could read it may destroy it now (docs/share.md, "Receipts").
  byId("destroy-card").hidden = left === 0;
  if (env === undefined) {
    show(body.value, afterText);
  } else if (linkKey === "") {
    showError(S.linkNoKey);
  } else if (needsPassphrase(env)) {
    passForm.hidden = false;
    decryptButton.hidden = false;
    passForm.addEventListener("submit", (event) => {
      event.preventDefault();
      void open(env, afterText, passInput.value);
    });
    // Typed before the read (a passphrase link): open at once; a wrong one is retried on the kept ciphertext (version 1).
    if (passInput.value !== "") await open(env, afterText, passInput.value);
    else passInput.focus();
  } else {
    await open(env, afterText);
  }
}

/**
 * "Destroy it now": POST /s/<id>/destroy with the reveal's proof (the same
 * link that read it), then the page says the link is dead; a 404 is the
 * same (gone meanwhile).
 */
async function destroyNow(): Promise<void> {
  const button = byId<HTMLButtonElement>("destroy");
  button.disabled = true;
  setStatus(S.destroying ?? "");
  showError(undefined);
  try {
    const headers: Record<string, string> = { Accept: "application/json" };
    if (prepared !== undefined) headers["Content-Type"] = "application/json";
    const res = await fetch(`${location.pathname.replace(/\/+$/, "")}/destroy`, {
      method: "POST",
      headers,
      ...(prepared === undefined ? {} : { body: JSON.stringify({ proof: prepared.proof }) }),
      credentials: "omit",
      cache: "no-store",
    });
    if (res.ok || res.status === 404) {
      byId("destroy-card").hidden = true;
      byId("reads-left").textContent = "";
      byId("after").textContent = S.destroyedNow ?? "";
      setStatus(S.destroyedNow ?? "");
      return;
    }
    button.disabled = false;
    setStatus("");
    showError(fill(S.destroyFailed ?? "", { error: await apiFailure(res) }));
  } catch (err) {
    button.disabled = false;
    setStatus("");
    showError(fill(S.destroyFailed ?? "", { error: String(err) }));
  }
}

revealButton.addEventListener("click", () => void revealNow());
byId("destroy").addEventListener("click", () => void destroyNow());
// Before the read, the passphrase form's submit is the Reveal (a passphrase link); after it, the form opens the kept ciphertext.
passForm.addEventListener("submit", (event) => {
  if (!revealButton.hidden) {
    event.preventDefault();
    void revealNow();
  }
});

byId("copy").addEventListener("click", () => void copyText(shown, valueField, S));
