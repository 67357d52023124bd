import type { Column } from "./output.js";
import { allPages, formatFields, formatRows, printJson } from "./output.js";

/**
 * How the admin commands print an answer (docs/cli.md "Administration"):
 * `--json` prints the answer as the API gave it, `-q` one field of it,
 * otherwise fields or a table.
 */

/** The output flags of an admin command. */
export interface PrintFlags {
  json?: boolean;
  quiet?: boolean;
}

/**
 * One record: `--json` the answer, `-q` its `quietField` alone (default: the
 * `secret` field, else `id`), otherwise `fields` one a line with `secret` last
 * (output.ts formatFields).
 */
export function showRecord(flags: PrintFlags, value: Record<string, unknown>, fields: readonly string[], secret?: string, quietField?: string): void {
  if (flags.json === true) printJson(value);
  else if (flags.quiet === true) process.stdout.write(`${String(value[quietField ?? secret ?? "id"])}\n`);
  else process.stdout.write(formatFields(value, fields, secret));
}

/** A list: `--json` the entries as one JSON array, otherwise a table under `columns` (`empty` when there are none). */
export function showList(flags: PrintFlags, entries: ReadonlyArray<Record<string, unknown>>, columns: readonly Column[], empty: string): void {
  process.stdout.write(flags.json === true ? `${JSON.stringify(entries)}\n` : formatRows(entries, columns, empty));
}

/**
 * Every page of a paged list (output.ts allPages, the entries under
 * `field`), printed by showList().
 */
export async function showAllPages(
  flags: PrintFlags,
  fetchPage: (cursor: string | undefined) => Promise<{ next_cursor?: string | null | undefined } & Record<string, unknown>>,
  field: string,
  columns: readonly Column[],
  empty: string,
): Promise<void> {
  showList(flags, await allPages<Record<string, unknown>>(fetchPage, field), columns, empty);
}

/** The answer of a delete: printed with `--json` only (silence otherwise, the exit code tells). */
export function showDeleted(flags: PrintFlags, answer: unknown): void {
  if (flags.json === true) printJson(answer);
}
