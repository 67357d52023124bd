/**
 * The one codec of page cursors (docs/contract.md §5: opaque cursors).
 * A cursor is base64url of `<tag>:<row id>`: `c1` for lists cut at a row id
 * (secrets, keys, webhooks, orgs, principals, roles), `a1` for the audit log.
 * The tag keeps a cursor of one list from being taken by another.
 */

/** The kinds of cursor: `c1` lists, `a1` the audit log. */
export type CursorTag = "c1" | "a1";

/** Encodes the row id to continue after as an opaque cursor. */
export function encodeCursor(tag: CursorTag, id: number): string {
  return Buffer.from(`${tag}:${id}`).toString("base64url");
}

/**
 * Decodes a cursor made by encodeCursor() with the same tag.
 * @returns the row id, or undefined when the cursor is not one of `tag`'s.
 */
export function decodeCursor(tag: CursorTag, cursor: string): number | undefined {
  const text = Buffer.from(cursor, "base64url").toString("utf8");
  if (!text.startsWith(`${tag}:`)) return undefined;
  const digits = text.slice(tag.length + 1);
  return /^\d{1,15}$/.test(digits) ? Number(digits) : undefined;
}
