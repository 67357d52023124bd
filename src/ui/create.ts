import QRCode from "qrcode";
import { DEFAULT_FILE_TYPE, isMediaType, linkFragment, sealEnvelope, sealFileEnvelope, sealFileMeta } from "@ephemeral-vault/client";
import { startAskForm } from "./ask.js";
import { apiFailure, byId, copyText, fill, formatBytes, pageStrings, setStatus, showError } from "./dom.js";

/**
 * The create page's script (GET /, docs/share.md): encrypts the value in
 * this browser (the envelope of the client package, docs/share.md), stores the envelope
 * as a public secret (POST secrets with the typed token, or POST s when the
 * vault allows anonymous links), and shows the link with its key in the
 * fragment, a Copy button and a QR code drawn here, and the sender's receipt
 * with its own Copy (docs/share.md, "Receipts"). The token is kept in
 * sessionStorage only, never in a link. Instead of the value, a file
 * (picked, or dropped on the form) is sealed with its name and type
 * (docs/share.md, "Files"); its size is checked against the vault's limit
 * before anything is read or sent. Below, "Ask for a secret" (ask.ts)
 * uses the same token.
 */
const TOKEN_ITEM = "ephemeral-vault.token";
const root = byId("create");
const S = pageStrings(root);
const anonymous = root.dataset.anonymous === "true";
const form = byId<HTMLFormElement>("create-form");
const tokenInput = byId<HTMLInputElement>("token");
const valueField = byId<HTMLTextAreaElement>("value");
const ttlSelect = byId<HTMLSelectElement>("ttl");
const readsInput = byId<HTMLInputElement>("reads");
const passInput = byId<HTMLInputElement>("passphrase");
const maxFailuresInput = byId<HTMLInputElement>("max-failures");
/** The fewest characters of a passphrase (docs/share.md, "The passphrase's strength and its offline cost"). */
const MIN_PASSPHRASE = 12;
const submit = byId<HTMLButtonElement>("submit");
const result = byId("result");
const linkField = byId<HTMLInputElement>("link");
const receiptField = byId<HTMLInputElement>("receipt");
const fileInput = byId<HTMLInputElement>("file");
const fileChosen = byId("file-chosen");
const fileClear = byId<HTMLButtonElement>("file-clear");
const maxFileBytes = Number(root.dataset.maxFileBytes);
const anonymousFileBytes = Number(root.dataset.anonymousFileBytes);
/** The file to share instead of the value, once picked or dropped and within the limit. */
let chosen: File | undefined;

/** The file limit that applies now: without a token an anonymous link's (its body is at most 1 MiB). */
function fileLimit(): number {
  return anonymous && tokenInput.value.trim() === "" ? anonymousFileBytes : maxFileBytes;
}
function showFileLimit(): void {
  byId("file-help").textContent = fill(S.fileHelp ?? "", { limit: formatBytes(fileLimit()) });
}

/**
 * The refusal of a file over the limit: both sizes rounded (formatBytes),
 * or exact in bytes when rounding would show them equal (10 MiB and one byte
 * against 10 MiB), so the message never reads "10 MiB: the limit is 10 MiB".
 */
function tooLarge(size: number): string {
  const limit = fileLimit();
  const [a, b] = [formatBytes(size), formatBytes(limit)];
  const exact = (n: number) => `${n.toLocaleString("en")} bytes`;
  return fill(S.fileTooLarge ?? "", a === b ? { size: exact(size), limit: exact(limit) } : { size: a, limit: b });
}

/** Takes `file` as the one to share (or none), refusing one over the limit before reading it. */
function choose(file: File | undefined): void {
  showError(undefined);
  if (file !== undefined && file.size > fileLimit()) {
    showError(tooLarge(file.size));
    file = undefined;
  }
  chosen = file;
  if (file === undefined) fileInput.value = "";
  fileChosen.textContent = file === undefined ? "" : fill(S.fileChosen ?? "", { name: file.name, size: formatBytes(file.size) });
  fileChosen.hidden = file === undefined;
  fileClear.hidden = file === undefined;
  // A file replaces the text: the text area is then neither needed nor sent.
  valueField.required = file === undefined;
  valueField.disabled = file !== undefined;
}
fileInput.addEventListener("change", () => choose(fileInput.files?.[0]));
fileClear.addEventListener("click", () => {
  choose(undefined);
  fileInput.focus();
});
// Drag and drop anywhere on the form: the first file dropped.
form.addEventListener("dragover", (event) => {
  if (event.dataTransfer?.types.includes("Files") !== true) return;
  event.preventDefault();
  form.classList.add("dropping");
});
form.addEventListener("dragleave", () => form.classList.remove("dropping"));
form.addEventListener("drop", (event) => {
  form.classList.remove("dropping");
  const file = event.dataTransfer?.files[0];
  if (file === undefined) return;
  event.preventDefault();
  choose(file);
});

tokenInput.value = sessionStorage.getItem(TOKEN_ITEM) ?? "";
/** Without a token the server caps the TTL (7 days) and the reads (10): offer only what it will take. */
function applyAnonymousCaps(): void {
  const capped = anonymous && tokenInput.value.trim() === "";
  for (const option of Array.from(ttlSelect.options)) option.disabled = capped && option.dataset.anonymous === "false";
  if (ttlSelect.selectedOptions[0]?.disabled === true) ttlSelect.value = "86400";
  readsInput.max = capped ? "10" : "1000";
}
tokenInput.addEventListener("input", applyAnonymousCaps);
tokenInput.addEventListener("input", showFileLimit);
applyAnonymousCaps();
showFileLimit();
byId("token-card").hidden = false;
form.hidden = false;
startAskForm({ S, tokenInput, saveToken: (token) => sessionStorage.setItem(TOKEN_ITEM, token) });

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  showError(undefined);
  const token = tokenInput.value.trim();
  if (token !== "") sessionStorage.setItem(TOKEN_ITEM, token);
  submit.disabled = true;
  setStatus(S.creating ?? "");
  try {
    const passphrase = passInput.value === "" ? undefined : passInput.value;
    if (passphrase !== undefined && [...passphrase].length < MIN_PASSPHRASE) {
      showError(S.passphraseTooShort);
      passInput.focus();
      return;
    }
    if (chosen !== undefined && chosen.size > fileLimit()) {
      showError(tooLarge(chosen.size));
      return;
    }
    const { envelope, linkKey, revealCheck } =
      chosen === undefined
        ? await sealEnvelope(valueField.value, { passphrase })
        : await sealFileEnvelope(
            { name: chosen.name, type: isMediaType(chosen.type) ? chosen.type : DEFAULT_FILE_TYPE, bytes: new Uint8Array(await chosen.arrayBuffer()) },
            { passphrase },
          );
    // Only the whole link (and the passphrase) can then spend a read (docs/share.md, "The reveal proof").
    const fields: Record<string, unknown> = { value: envelope, reveal_check: revealCheck, ttl_seconds: Number(ttlSelect.value), max_reads: Number(readsInput.value) };
    if (maxFailuresInput.value !== "") fields.max_failed_reveals = Number(maxFailuresInput.value);
    // A file without a passphrase: its name, type and size for the recipient page before the reveal (docs/share.md, "Files").
    if (chosen !== undefined && passphrase === undefined) {
      fields.file_meta = await sealFileMeta(linkKey, { name: chosen.name, type: isMediaType(chosen.type) ? chosen.type : DEFAULT_FILE_TYPE, size: chosen.size });
    }
    const body = JSON.stringify(fields);
    const headers: Record<string, string> = { "Content-Type": "application/json", Accept: "application/json" };
    if (token !== "") headers.Authorization = `Bearer ${token}`;
    const res = await fetch(token === "" && anonymous ? "s" : "secrets", { method: "POST", headers, body, credentials: "omit", cache: "no-store" });
    if (!res.ok) {
      showError(fill(S.createFailed ?? "", { error: await apiFailure(res) }));
      return;
    }
    const created = (await res.json()) as { url: string; receipt?: string };
    const link = `${created.url}#${linkFragment(linkKey, passphrase !== undefined, chosen !== undefined)}`;
    linkField.value = link;
    // The sender's receipt, shown once (docs/share.md, "Receipts"); a vault without receipts shows none.
    receiptField.value = created.receipt ?? "";
    byId("receipt-card").hidden = created.receipt === undefined;
    form.hidden = true;
    result.hidden = false;
    await QRCode.toCanvas(byId<HTMLCanvasElement>("qr"), link, { errorCorrectionLevel: "M", margin: 2, width: 256 });
    linkField.focus();
    linkField.select();
    valueField.value = "";
    passInput.value = "";
    choose(undefined);
  } catch (err) {
    showError(fill(S.createFailed ?? "", { error: String(err) }));
  } finally {
    submit.disabled = false;
    setStatus("");
  }
});

byId("copy").addEventListener("click", () => void copyText(linkField.value, linkField, S));
byId("copy-receipt").addEventListener("click", () => void copyText(receiptField.value, receiptField, S));
byId("again").addEventListener("click", () => {
  result.hidden = true;
  receiptField.value = "";
  form.hidden = false;
  valueField.focus();
});
