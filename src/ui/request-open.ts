import { EnvelopeError } from "../../packages/client/src/envelope.js";
import { openAnswer, requestRevealProof } from "../../packages/client/src/request-envelope.js";
import { apiFailure, byId, copyText, fill, pageStrings, setStatus, showError } from "./dom.js";

/**
 * The private link's script (GET /r/<id>/open#<private key>, docs/requests.md,
 * "The answer page and the private link"): the page looks nothing up. The
 * private key is the fragment (128 base64url characters; anything else is
 * "incomplete or damaged" and nothing is sent). Open the answer posts the
 * reveal proof to POST /r/<id>/reveal (one read of the answer), decrypts
 * the answer here and only then removes the fragment from the address bar.
 */
const root = byId("open-page");
const S = pageStrings(root);
const privateKey = location.hash.replace(/^#/, "");
const path = location.pathname.replace(/\/+$/, "");
// The request's id: the segment before /open.
const base = path.replace(/\/open$/, "");
const requestId = base.slice(base.lastIndexOf("/") + 1);
const openButton = byId<HTMLButtonElement>("open");
const checkAgain = byId<HTMLButtonElement>("check-again");
const result = byId("result");
const valueField = byId("value");
let shown = "";

const PRIVATE_KEY = /^[A-Za-z0-9_-]{128}$/;
if (PRIVATE_KEY.test(privateKey)) openButton.hidden = false;
else showError(S.openLinkIncomplete);

function readsLeftText(left: number | null): string {
  if (left === null) return S.openReadsUnlimited ?? "";
  if (left === 0) return S.openLastRead ?? "";
  return left === 1 ? (S.openReadsLeftOne ?? "") : fill(S.openReadsLeftMany ?? "", { n: left });
}

/** Both buttons off (a read is under way) or back on: `which` is the one offered. */
function offer(which: HTMLButtonElement | undefined): void {
  openButton.hidden = which !== openButton;
  checkAgain.hidden = which !== checkAgain;
  openButton.disabled = false;
  checkAgain.disabled = false;
}

async function openNow(button: HTMLButtonElement): Promise<void> {
  button.disabled = true;
  setStatus(S.opening ?? "");
  showError(undefined);
  let res: Response;
  try {
    const { proof } = await requestRevealProof(privateKey);
    res = await fetch(`${base}/reveal`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify({ proof }),
      credentials: "omit",
      cache: "no-store",
    });
  } catch (err) {
    button.disabled = false;
    setStatus("");
    // A key of the right length that is no P-256 key is a damaged link; nothing was sent then.
    showError(err instanceof EnvelopeError ? S.openLinkIncomplete : fill(S.openFailed ?? "", { error: String(err) }));
    return;
  }
  setStatus("");
  if (res.status === 409) {
    // Nobody answered yet: nothing was counted, so the person may check again later.
    const body = (await res.json().catch(() => ({}))) as { expires_at?: unknown };
    const until = typeof body.expires_at === "number" ? new Date(body.expires_at * 1000).toLocaleString() : undefined;
    offer(checkAgain);
    showError(until === undefined ? S.openNotYet : fill(S.openNotYetUntil ?? "", { time: until }));
    // The button pressed may be gone: the keyboard stays on the one offered.
    checkAgain.focus();
    return;
  }
  if (res.status === 403) {
    offer(undefined);
    showError(S.openMismatch);
    return;
  }
  if (res.status === 404) {
    offer(undefined);
    showError(S.openGone);
    return;
  }
  if (res.status === 429) {
    offer(button);
    showError(`${S.tooManyTitle}. ${S.tooManyLead}`);
    return;
  }
  if (!res.ok) {
    offer(button);
    showError(fill(S.openFailed ?? "", { error: await apiFailure(res) }));
    return;
  }
  const body = (await res.json()) as { value: string; read_count: number; max_reads: number | null };
  offer(undefined);
  const left = body.max_reads === null ? null : Math.max(0, body.max_reads - body.read_count);
  let value: string;
  try {
    value = await openAnswer(privateKey, requestId, body.value);
  } catch {
    showError(S.openBadKey);
    return;
  }
  // The key has done its work: out of the address bar and the history entry.
  history.replaceState(null, "", location.pathname + location.search);
  shown = value;
  byId("open-lead").hidden = true;
  valueField.textContent = value;
  byId("after").textContent = readsLeftText(left);
  result.hidden = false;
  valueField.focus();
}

openButton.addEventListener("click", () => void openNow(openButton));
checkAgain.addEventListener("click", () => void openNow(checkAgain));
byId("copy").addEventListener("click", () => void copyText(shown, valueField, S));
