/**
 * The console's one script (docs/console.md): the Copy buttons of a value
 * shown once (a new token, a webhook's signing secret, a revealed secret).
 * Each `button[data-copy]` copies the text of the element its attribute
 * names; the strings come from the page (`data-strings` of <body>).
 */
import { copyText } from "./dom.js";

const strings: Record<string, string> = { copied: "Copied to the clipboard.", copyFailed: "Copying failed: select the text and copy it yourself." };
Object.assign(strings, JSON.parse(document.body.dataset.strings ?? "{}") as Record<string, string>);

for (const button of Array.from(document.querySelectorAll<HTMLButtonElement>("button[data-copy]"))) {
  button.addEventListener("click", () => {
    const target = document.getElementById(button.dataset.copy ?? "");
    if (target === null) return;
    const value = target instanceof HTMLInputElement || target instanceof HTMLTextAreaElement ? target.value : (target.textContent ?? "");
    void copyText(value, target, strings);
  });
}
