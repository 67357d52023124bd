import * as v from "valibot";
import { ApiError } from "../errors.js";

/**
 * The fields of requests by the API's conventions (docs/api.md, its
 * conventions; docs/contract.md §4 and §5): required strings, integers in a
 * range (JSON numbers or query-string digits), the page query of lists,
 * the latest time an input may name, names (length in characters, no
 * control, bidi or zero-width characters) and the ids path parameters name.
 */

/** A required string field: a string, non-empty. */
export const requiredString = (field: string) =>
  v.pipe(v.string(`${field} must be a string`), v.minLength(1, `${field} must not be empty`));

/** An integer in [min, max] given as a JSON number (docs/contract.md §5). */
export const intRange = (field: string, min: number, max: number) =>
  v.pipe(
    v.number(`${field} must be an integer from ${min} to ${max}`),
    v.integer(`${field} must be an integer from ${min} to ${max}`),
    v.minValue(min, `${field} must be an integer from ${min} to ${max}`),
    v.maxValue(max, `${field} must be an integer from ${min} to ${max}`),
  );

/** An integer in [min, max] given as a query-string parameter. */
export const queryInt = (field: string, min: number, max: number) =>
  v.pipe(
    v.string(),
    v.regex(/^\d{1,16}$/, `${field} must be an integer from ${min} to ${max}`),
    v.transform(Number),
    v.minValue(min, `${field} must be an integer from ${min} to ${max}`),
    v.maxValue(max, `${field} must be an integer from ${min} to ${max}`),
  );

/** The `cursor` query parameter of paged lists: an opaque string, checked by lists.ts decodeCursor(). */
export const cursorParam = v.optional(v.pipe(v.string(), v.description("next_cursor of the previous page")));

/** Pagination of list endpoints (docs/contract.md §5): limit 1-1000 (default 1000) and cursor. */
export const pageQuery = v.object({
  limit: v.optional(v.pipe(queryInt("limit", 1, 1000), v.description("integer 1-1000, default 1000"))),
  cursor: cursorParam,
});

/** Latest time any input may name (expires_at, valid_after, valid_before, since, until): 9999-12-31T23:59:59Z, Unix seconds. */
export const MAX_UNIX_SECONDS = 253_402_300_799;

/**
 * Characters refused in a `name` (docs/contract.md §4): controls (Cc:
 * C0, DEL, C1, so no newline or escape sequence reaches a log or a
 * terminal), format characters (Cf: the bidi controls U+200E/F,
 * U+202A-U+202E and U+2066-U+2069 that can reorder what an operator reads,
 * the zero-width U+200B-U+200D, U+2060 and U+FEFF that make two different
 * names look alike), line and paragraph separators (Zl, Zp) and lone
 * surrogates (Cs).
 */
const UNSAFE_IN_NAME = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u;

/** True when `text` has none of the characters refused in a name (UNSAFE_IN_NAME). */
export function isSafeName(text: string): boolean {
  return !UNSAFE_IN_NAME.test(text);
}

/** The message of a name refused by isSafeName; never repeats the input. */
export const unsafeNameMessage = (field: string) =>
  `${field} must not contain control, bidirectional or zero-width characters`;

/** Most characters of a `name` (docs/contract.md §4). */
export const MAX_NAME_CHARS = 128;

/**
 * The length of a string in characters (Unicode code points), not UTF-16
 * units: an emoji is one character, as a client counts it.
 */
export function charCount(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/**
 * A `name` (org, principal, key label, webhook description): 1-128
 * characters (code points) after trimming, without control, bidi or
 * zero-width characters (isSafeName) (docs/contract.md §4).
 */
export const nameField = (field = "name") =>
  v.pipe(
    v.string(`${field} must be a string`),
    v.trim(),
    v.minLength(1, `${field} must not be empty`),
    v.check((text) => charCount(text) <= MAX_NAME_CHARS, `${field} must be at most ${MAX_NAME_CHARS} characters`),
    v.check(isSafeName, unsafeNameMessage(field)),
  );

/** What an id looks like unless its resource says more: a short printable string. */
const ANY_ID = /^[A-Za-z0-9_]{1,64}$/;

/**
 * The id a path parameter names (`:id`, `:key_id`): an id not of the
 * resource's shape cannot exist, so it is 404. Called where the resource is
 * looked up (after its org), not as input validation.
 * @param pattern the shape of the resource's ids; default: 1-64 of `A-Za-z0-9_`.
 * @returns the id.
 * @throws ApiError 404 with `notFound` as the error.
 */
export function idOrNotFound(id: string, notFound: string, pattern: RegExp = ANY_ID): string {
  if (!pattern.test(id)) throw new ApiError(404, notFound);
  return id;
}
