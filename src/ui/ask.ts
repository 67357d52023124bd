import { generateRequestKeys, requestRevealProof } from "../../packages/client/src/request-envelope.js";
import { apiFailure, byId, copyText, fill, setStatus, showError } from "./dom.js";

/**
 * The create page's "Ask for a secret" (docs/requests.md, "The answer page
 * and the private link"): makes the asker's key pair in this browser
 * (generateRequestKeys), POSTs the request (POST requests with the page's
 * token as bearer: a request is never anonymous) with the public key and
 * the reveal check, and shows the link to send (`url`) and the private link
 * `<url>/open#<private key>`, which only this page ever held.
 * @param options.S the page's strings; options.tokenInput the page's one token
 *   field; options.saveToken keeps a typed token in sessionStorage.
 */
export function startAskForm(options: { S: Record<string, string>; tokenInput: HTMLInputElement; saveToken: (token: string) => void }): void {
  const { S, tokenInput } = options;
  const form = byId<HTMLFormElement>("ask-form");
  const description = byId<HTMLTextAreaElement>("ask-description");
  const ttl = byId<HTMLSelectElement>("ask-ttl");
  const submit = byId<HTMLButtonElement>("ask-submit");
  const result = byId("ask-result");
  const urlField = byId<HTMLInputElement>("ask-url");
  const privateField = byId<HTMLInputElement>("ask-private");
  const error = (message: string | undefined) => showError(message, "ask-error");
  form.hidden = false;

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error(undefined);
    const token = tokenInput.value.trim();
    if (token === "") {
      error(S.askNeedsToken);
      tokenInput.focus();
      return;
    }
    options.saveToken(token);
    submit.disabled = true;
    setStatus(S.askCreating ?? "", "ask-status");
    try {
      const keys = await generateRequestKeys();
      const { revealCheck } = await requestRevealProof(keys.privateKey);
      const res = await fetch("requests", {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json", Authorization: `Bearer ${token}` },
        body: JSON.stringify({ description: description.value, public_key: keys.publicKey, reveal_check: revealCheck, ttl_seconds: Number(ttl.value) }),
        credentials: "omit",
        cache: "no-store",
      });
      if (!res.ok) {
        error(fill(S.askFailed ?? "", { error: await apiFailure(res) }));
        return;
      }
      const created = (await res.json()) as { url: string };
      urlField.value = created.url;
      // The private key lives in the fragment only: a browser never sends it to the vault.
      privateField.value = `${created.url.replace(/\/+$/, "")}/open#${keys.privateKey}`;
      form.hidden = true;
      result.hidden = false;
      description.value = "";
      urlField.focus();
      urlField.select();
    } catch (err) {
      error(fill(S.askFailed ?? "", { error: String(err) }));
    } finally {
      submit.disabled = false;
      setStatus("", "ask-status");
    }
  });

  byId("ask-copy-url").addEventListener("click", () => void copyText(urlField.value, urlField, S, "ask-status"));
  byId("ask-copy-private").addEventListener("click", () => void copyText(privateField.value, privateField, S, "ask-status"));
  byId("ask-again").addEventListener("click", () => {
    result.hidden = true;
    urlField.value = "";
    privateField.value = "";
    form.hidden = false;
    description.focus();
  });
}
