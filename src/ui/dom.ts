/**
 * Small DOM helpers shared by the page scripts (bundled by tsup into
 * dist/ui, served by the vault: docs/share.md). Text goes in through
 * textContent only, never as HTML.
 */

/** The element with `id`. @throws Error when the page has none (a page and its script out of step). */
export function byId<T extends HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (el === null) throw new Error(`page element #${id} missing`);
  return el as T;
}

/** The page's strings (the `data-strings` JSON of `root`). */
export function pageStrings(root: HTMLElement): Record<string, string> {
  return JSON.parse(root.dataset.strings ?? "{}") as Record<string, string>;
}

/** `template` with each `{name}` replaced. */
export function fill(template: string, values: Record<string, string | number>): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => (name in values ? String(values[name]) : whole));
}

/** Shows `message` in the page's alert (#error, or the alert `id`), or hides it for undefined. */
export function showError(message: string | undefined, id = "error"): void {
  const el = byId(id);
  el.textContent = message ?? "";
  el.hidden = message === undefined;
}

/** Sets the polite status line (#status, or the status line `id`). */
export function setStatus(message: string, id = "status"): void {
  byId(id).textContent = message;
}

/**
 * Copies `text` to the clipboard and says so in the status line (#status,
 * or `statusId`); selects `field` when the clipboard is not available.
 */
export async function copyText(text: string, field: HTMLElement, strings: Record<string, string>, statusId = "status"): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
    setStatus(strings.copied ?? "", statusId);
  } catch {
    field.focus();
    if (field instanceof HTMLInputElement || field instanceof HTMLTextAreaElement) {
      field.select();
    } else {
      const range = document.createRange();
      range.selectNodeContents(field);
      window.getSelection()?.removeAllRanges();
      window.getSelection()?.addRange(range);
    }
    setStatus(strings.copyFailed ?? "", statusId);
  }
}

/** The API's explanation of a failed answer: `error`, and `message` when there is one. */
export async function apiFailure(res: Response): Promise<string> {
  try {
    const body = (await res.json()) as { error?: unknown; message?: unknown };
    const error = typeof body.error === "string" ? body.error : `HTTP ${res.status}`;
    return typeof body.message === "string" ? `${error}: ${body.message}` : error;
  } catch {
    return `HTTP ${res.status}`;
  }
}

/**
 * A size in bytes for people: `512 bytes`, `300 KiB`, `10 MiB` (binary
 * units, one decimal below 10, as the limits of docs/share.md "Files" are
 * written).
 */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  const units = ["KiB", "MiB", "GiB"];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const shown = value < 10 && !Number.isInteger(value) ? value.toFixed(1) : String(Math.round(value));
  return `${shown} ${units[unit]}`;
}
