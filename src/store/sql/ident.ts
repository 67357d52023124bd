/**
 * `name` as an SQL identifier, double-quoted, a `"` doubled: the same rule
 * in SQLite and PostgreSQL. For names from this build's own schema only.
 */
export function ident(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
