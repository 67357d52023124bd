import * as v from "valibot";
import { decodeCursor as decodeTagged, encodeCursor as encodeTagged } from "../../domain/cursor.js";
import { ApiError } from "../errors.js";

/**
 * Paged lists at the edge (docs/api.md, its conventions): the opaque
 * cursor of the next page, the response `{<field>: items, next_cursor?}`
 * and its schema; the query is input.ts pageQuery (limit and cursor).
 */

/** Encodes a row id as an opaque list cursor (cursor.ts, tag `c1`). */
export function encodeCursor(afterId: number): string {
  return encodeTagged("c1", afterId);
}

/**
 * Decodes a cursor made by encodeCursor().
 * @throws ApiError 400 for anything else.
 */
export function decodeCursor(cursor: string | undefined): number | undefined {
  if (cursor === undefined) return undefined;
  const id = decodeTagged("c1", cursor);
  if (id === undefined) throw new ApiError(400, "cursor is not valid");
  return id;
}

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
