import { sealAnswer } from "../../packages/client/src/request-envelope.js";
import { apiFailure, byId, fill, pageStrings, setStatus, showError } from "./dom.js";

/**
 * The answer page's script (GET /r/<id>, docs/requests.md, "The answer page
 * and the private link"): Send encrypts the typed text in this browser to
 * the asker's public key (the page's data-public-key; sealAnswer of the
 * client package, WebCrypto only) and posts the envelope to
 * POST /r/<id>/answer. The text is sent as the browser gives it (a text
 * area turns CR LF into LF). An answer over the vault's size limit
 * (data-max-bytes, VAULT_MAX_VALUE_BYTES) is refused here, before sending.
 */
const root = byId("answer-page");
const S = pageStrings(root);
const publicKey = root.dataset.publicKey ?? "";
const maxBytes = Number(root.dataset.maxBytes ?? "0");
// The request's id is the page's last path segment (the server answered this page only for a well-formed one).
const path = location.pathname.replace(/\/+$/, "");
const requestId = path.slice(path.lastIndexOf("/") + 1);
const form = byId<HTMLFormElement>("answer-form");
const field = byId<HTMLTextAreaElement>("answer");
const send = byId<HTMLButtonElement>("send");

const expires = document.getElementById("expires");
if (expires instanceof HTMLTimeElement && expires.dateTime !== "") {
  expires.textContent = new Date(expires.dateTime).toLocaleString();
}
form.hidden = false;

/** The request is settled (answered, by this page or another, or gone): the form and the expiry go. */
function closeForm(): void {
  form.hidden = true;
  byId("expiry").hidden = true;
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  showError(undefined);
  const value = field.value;
  const bytes = new TextEncoder().encode(value).length;
  if (maxBytes > 0 && bytes > maxBytes) {
    showError(fill(S.answerTooLong ?? "", { max: maxBytes, n: bytes }));
    field.focus();
    return;
  }
  send.disabled = true;
  setStatus(S.answerSending ?? "");
  try {
    const envelope = await sealAnswer(publicKey, requestId, value);
    const res = await fetch(`${path}/answer`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify({ value: envelope }),
      credentials: "omit",
      cache: "no-store",
    });
    if (res.status === 201) {
      field.value = "";
      closeForm();
      const sent = byId("sent");
      sent.hidden = false;
      sent.focus();
      return;
    }
    if (res.status === 409) {
      closeForm();
      showError(S.answerTaken);
    } else if (res.status === 404) {
      closeForm();
      showError(S.answerGone);
    } else if (res.status === 413) {
      showError(fill(S.answerTooLong ?? "", { max: maxBytes, n: bytes }));
    } else if (res.status === 429) {
      showError(S.answerTooMany);
    } else {
      showError(fill(S.answerFailed ?? "", { error: await apiFailure(res) }));
    }
  } catch (err) {
    showError(fill(S.answerFailed ?? "", { error: String(err) }));
  } finally {
    send.disabled = false;
    setStatus("");
  }
});
