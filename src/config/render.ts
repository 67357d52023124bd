import { SETTINGS } from "./settings.js";
import type { Setting } from "./setting.js";

// The settings table (settings.ts) rendered for people: the serve flags of
// `--help`, and the table of docs/configuration.md (`npm run
// gen:config-docs` writes it; a test checks the page holds what this renders).

const ROWS: readonly Setting<unknown>[] = Object.values(SETTINGS);

/** A row's default as text: its shown form, else the value; undefined when there is none to show. */
function defaultText(setting: Setting<unknown>): string | undefined {
  if (setting.shown !== undefined) return setting.shown;
  const value = setting.default;
  return typeof value === "string" || typeof value === "number" || typeof value === "boolean" ? String(value) : undefined;
}

/**
 * The serve flags for `--help`, one line each: flag, variables, help and
 * the default when it is a plain value (`--port  VAULT_PORT, PORT  TCP port (default 8484)`).
 */
export function settingsHelp(): string {
  return ROWS.map((s) => {
    const shown = s.shown === undefined && s.derive === undefined ? defaultText(s) : undefined;
    // "bind address (0.0.0.0 to self-host)" -> "... (0.0.0.0 to self-host; default 127.0.0.1)"
    const help = shown === undefined ? s.help : s.help.endsWith(")") ? `${s.help.slice(0, -1)}; default ${shown})` : `${s.help} (default ${shown})`;
    return `  --${s.flag.padEnd(26)} ${s.env.join(", ").padEnd(32)} ${help}`;
  }).join("\n");
}

const cell = (text: string) => text.replace(/\|/g, "\\|");
const code = (text: string) => `\`${text}\``;

/** The Markdown table of every setting: variable (and aliases), flag, default, values, meaning. */
export function settingsDocTable(): string {
  const lines = ["| Variable | Flag | Default | Values | Meaning |", "|---|---|---|---|---|"];
  for (const s of ROWS) {
    const [first, ...aliases] = s.env;
    const variable = code(first ?? "") + (aliases.length === 0 ? "" : ` (also ${aliases.map(code).join(", ")})`);
    const shown = s.shown ?? code(defaultText(s) ?? "");
    lines.push(`| ${variable} | ${code(`--${s.flag}`)} | ${cell(shown)} | ${cell(s.values)} | ${cell(s.doc)} |`);
  }
  return lines.join("\n");
}

/** The comment lines around the generated table in docs/configuration.md. */
export const DOC_TABLE_START = "<!-- settings table: generated from src/config/settings.ts by `npm run gen:config-docs`; edit the table there -->";
export const DOC_TABLE_END = "<!-- end of the settings table -->";

/**
 * docs/configuration.md with the text between DOC_TABLE_START and
 * DOC_TABLE_END replaced by settingsDocTable().
 * @throws Error when the page lacks the two comment lines.
 */
export function withSettingsDocTable(page: string): string {
  const start = page.indexOf(DOC_TABLE_START);
  const end = page.indexOf(DOC_TABLE_END);
  if (start < 0 || end < start) throw new Error("docs/configuration.md has no settings table markers");
  return `${page.slice(0, start + DOC_TABLE_START.length)}\n\n${settingsDocTable()}\n\n${page.slice(end)}`;
}
