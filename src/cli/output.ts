import { ConfigError } from "../config.js";

/** A column of a table: its header and how to read the cell from an entry. */
export type Column = [header: string, field: string];

/**
 * One cell as text: Unix-second fields (`*_at`, `at`, `timestamp`,
 * `valid_after`, `valid_before`) in UTC ISO form, null or absent as `-`,
 * arrays joined with `,`, objects as JSON.
 */
function cell(field: string, value: unknown): string {
  if (value === null || value === undefined) return "-";
  if (typeof value === "number" && /(^|_)(at|timestamp|after|before)$/.test(field)) {
    return new Date(value * 1000).toISOString().replace(/\.000Z$/, "Z");
  }
  if (Array.isArray(value)) return value.map(String).join(",");
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

/**
 * A table of `entries` under `columns` (docs/cli.md "Administration"):
 * a header line, then one line per entry, cells padded to the column width.
 * @returns the text; `empty` and a newline when there are no entries.
 */
export function formatRows(entries: ReadonlyArray<Record<string, unknown>>, columns: readonly Column[], empty: string): string {
  if (entries.length === 0) return `${empty}\n`;
  const rows = [columns.map(([header]) => header), ...entries.map((e) => columns.map(([, field]) => cell(field, e[field])))];
  const widths = columns.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  return `${rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join("  ")).join("\n")}\n`;
}

/**
 * One object as `field: value` lines, in `fields` order (absent fields
 * skipped). `secret` names the field shown only once (a token, a signing
 * secret): it comes last, with a line saying to store it now.
 */
export function formatFields(value: Record<string, unknown>, fields: readonly string[], secret?: string): string {
  const shown = fields.filter((f) => f in value);
  const width = Math.max(...shown.map((f) => f.length), secret?.length ?? 0);
  let text = shown.map((f) => `${`${f}:`.padEnd(width + 2)}${cell(f, value[f])}\n`).join("");
  if (secret !== undefined && typeof value[secret] === "string") {
    text += `${`${secret}:`.padEnd(width + 2)}${value[secret]}\n`;
    text += `(the ${secret} is shown only now: store it; the vault cannot show it again)\n`;
  }
  return text;
}

/** Writes `value` as one line of JSON to stdout. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

/** `read,write` -> ["read", "write"]; empty items dropped. @throws ConfigError when nothing is left. */
export function parseList(text: string, what: string): string[] {
  const items = text
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  if (items.length === 0) throw new ConfigError(`${what} needs at least one value (comma-separated)`);
  return items;
}

/**
 * A time on the command line: Unix seconds (`1767225600`) or an ISO 8601
 * date (`2026-12-31`, `2026-12-31T12:00:00Z`).
 * @returns Unix seconds.
 * @throws ConfigError (exit 2) for anything else.
 */
export function parseTime(text: string, what: string): number {
  const trimmed = text.trim();
  if (/^\d{1,12}$/.test(trimmed)) return Number(trimmed);
  const ms = /^\d{4}-\d\d-\d\d/.test(trimmed) ? Date.parse(trimmed) : Number.NaN;
  if (!Number.isFinite(ms)) throw new ConfigError(`bad ${what} "${text}": use Unix seconds or an ISO date (2026-12-31, 2026-12-31T12:00:00Z)`);
  return Math.floor(ms / 1000);
}

/** A page size (`--limit N`), 1-1000. @throws ConfigError otherwise. */
export function parseLimit(text: string): number {
  const n = /^\d{1,4}$/.test(text.trim()) ? Number(text) : Number.NaN;
  if (!(n >= 1 && n <= 1000)) throw new ConfigError(`bad --limit "${text}": use 1 to 1000`);
  return n;
}

/**
 * Every entry of a paged list (`{<field>: [...], next_cursor?}`), following
 * next_cursor.
 */
export async function allPages<T>(
  fetchPage: (cursor: string | undefined) => Promise<{ next_cursor?: string | null | undefined } & Record<string, unknown>>,
  field: string,
): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | undefined;
  do {
    const page = await fetchPage(cursor);
    const items = page[field];
    if (Array.isArray(items)) out.push(...(items as T[]));
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
  return out;
}
