import * as v from "valibot";
import { encodeCursor } from "./input.js";

/**
 * Paged lists at the edge (docs/api.md, its conventions): the response
 * `{<field>: items, next_cursor?}` and its schema; the query is input.ts
 * pageQuery (limit and cursor).
 */

/** A list response: the items under their field, and `next_cursor` while more remain. */
export type ListBody<K extends string, T> = { [F in K]: T[] } & { next_cursor?: string };

/**
 * A list response: `{<field>: items, next_cursor?}`, with `next_cursor`
 * only when more remain.
 * @param cursor the opaque cursor of the next page, or null on the last page.
 */
export function listBody<K extends string, T>(field: K, items: T[], cursor: string | null): ListBody<K, T> {
  const body = { [field]: items } as ListBody<K, T>;
  if (cursor !== null) body.next_cursor = cursor;
  return body;
}

/**
 * listBody() of a page cut at a row id: `nextAfterId` (null on the last
 * page) becomes the encodeCursor() cursor.
 */
export function pageBody<K extends string, T>(field: K, items: T[], nextAfterId: number | null): ListBody<K, T> {
  return listBody(field, items, nextAfterId === null ? null : encodeCursor(nextAfterId));
}

/**
 * The schema of a list response, `{<field>: [item], next_cursor?}`.
 * @param items the schema of one item.
 */
export function listSchema(field: string, items: v.GenericSchema) {
  return v.object({ [field]: v.array(items), next_cursor: v.optional(v.string()) });
}
