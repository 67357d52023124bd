import { boolean, wholeNumber } from "./values.js";
import type { Config } from "./types.js";
import type { Raw } from "./values.js";

/**
 * One row of the settings table (settings.ts): everything about a setting in
 * one place. loadConfig() reads it, the serve command makes its flag from it,
 * `--help` and the table of docs/configuration.md are rendered from it
 * (render.ts), and the components get the resolved value (no defaults of
 * their own).
 */
export interface Setting<T> {
  /** Environment variables, the first one canonical (errors name it); the others are aliases. */
  env: readonly string[];
  /** The serve command's flag without its dashes: the first variable without `VAULT_`, lower case, dashes (VAULT_DATA_DIR -> data-dir). */
  flag: string;
  /** `boolean`: the flag may be given bare (true) or with a value (`--trust-proxy=false`, `--trust-proxy no`). */
  kind: "value" | "boolean";
  /** The value when neither the flag nor a variable is set. */
  default: T;
  /**
   * When unset and this is given: the value derived from the host, the port and
   * whether TLS is on (the public URL); loadConfig resolves derived rows after the others.
   */
  derive?: ((at: DeriveFrom) => T) | undefined;
  /** How the default is shown when it is not a plain value: "generated", "none", a pattern. */
  shown?: string | undefined;
  /** What it takes, for the docs: a range, a format. */
  values: string;
  /** Text (or a bare flag's true) to value. @throws ConfigError naming the variable. */
  parse: (raw: Raw, name: string) => T;
  /** One line for `--help`. */
  help: string;
  /** The meaning column of docs/configuration.md (Markdown). */
  doc: string;
}

/** What a derived default is made from: the resolved VAULT_HOST, VAULT_PORT, and whether VAULT_TLS_CERT is set. */
export interface DeriveFrom {
  host: string;
  port: number;
  tls: boolean;
  /** The first of VAULT_ACME_DOMAINS, when certificates come by ACME. */
  domain?: string | undefined;
}

/** The settings table: one row per Config field (settings.ts). */
export type SettingsTable = { [K in keyof Config]: Setting<Config[K]> };

/** The value part of a row: kind, default, values, parse (and a shown default or a derivation). */
export type SettingKind<T> = Pick<Setting<T>, "kind" | "default" | "values" | "parse" | "shown" | "derive">;

/** The flag of a variable: VAULT_DATA_DIR -> data-dir. */
function flagOf(variable: string): string {
  return variable.replace(/^VAULT_/, "").toLowerCase().replace(/_/g, "-");
}

/** A row: its variables, its kind, its help line and its documentation. */
export function row<T>(env: readonly [string, ...string[]], kind: SettingKind<T>, help: string, doc: string): Setting<T> {
  return { env, flag: flagOf(env[0]), ...kind, help, doc };
}

/** A whole number from `min` to `max`, `fallback` when unset. */
export function int(min: number, max: number, fallback: number): SettingKind<number> {
  return { kind: "value", default: fallback, values: `${min} to ${max}`, parse: (raw, name) => wholeNumber(raw, name, min, max) };
}

/** true/false, `fallback` when unset; the flag may be bare. */
export function flag(fallback: boolean): SettingKind<boolean> {
  return { kind: "boolean", default: fallback, values: "`true`/`false`", parse: boolean };
}

/** Text of the given format, `fallback` (shown as `shown` when given) when unset. */
export function text<T>(values: string, parse: (raw: Raw, name: string) => T, fallback: T, shown?: string): SettingKind<T> {
  return { kind: "value", default: fallback, values, parse, shown };
}
