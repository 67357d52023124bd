/**
 * A SQLite GLOB pattern matching strings (secret keys, key prefixes) that
 * start with `prefix`; glob metacharacters are bracketed so they match
 * themselves (`[*]`).
 */
export function globPrefix(prefix: string): string {
  return prefix.replace(/[*?[\]]/g, (c) => `[${c}]`) + "*";
}
