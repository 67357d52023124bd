/**
 * Cursor paging of list statements (docs/contract.md §5): a list asks
 * its statement for `limit + 1` rows; the extra row only tells that more
 * remain, and the last row kept gives the cursor to continue after.
 */

/**
 * One page of a list, as the domain answers it (orgs, roles, principals,
 * principal keys, scoped keys, webhooks): the routes turn `nextAfterId`
 * into `next_cursor` (cursor.ts).
 */
export interface Page<T> {
  /** At most the page size asked for, in the list's order. */
  items: T[];
  /** The position (row id) to continue after when more remain, else null. */
  nextAfterId: number | null;
}

/** One page cut from a `limit + 1` fetch. */
export interface CutPage<R> {
  /** At most `limit` rows, in the statement's order. */
  rows: R[];
  /** The cursor (row id) of the last row kept when more remain, else null. */
  next: number | null;
}

/**
 * Cuts a page from rows fetched with `LIMIT limit + 1`.
 * @param rows the statement's rows, at most limit + 1.
 * @param limit the page size asked for (1 to 1000).
 * @param cursorOf the cursor of a row: its rowid or id.
 * @returns the first `limit` rows, and the cursor of the last of them when more remain.
 */
export function cutPage<R>(rows: R[], limit: number, cursorOf: (row: R) => number): CutPage<R> {
  const more = rows.length > limit;
  const page = more ? rows.slice(0, limit) : rows;
  const last = page[page.length - 1];
  return { rows: page, next: more && last !== undefined ? cursorOf(last) : null };
}
