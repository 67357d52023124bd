/**
 * Characters refused in a `name` (decisions.md section 2): controls (Cc:
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

/**
 * True when every string in a parsed JSON value (object keys included) is
 * well-formed Unicode: no lone surrogate, as `"a\ud800b"` in JSON gives. Such
 * a string cannot be stored as UTF-8 without turning into U+FFFD, so it
 * would read back different from what was written.
 */
export function isWellFormedJson(value: unknown): boolean {
  if (typeof value === "string") return isWellFormed(value);
  if (Array.isArray(value)) return value.every(isWellFormedJson);
  if (value !== null && typeof value === "object") {
    return Object.entries(value).every(([key, item]) => isWellFormed(key) && isWellFormedJson(item));
  }
  return true;
}

/**
 * String.prototype.isWellFormed (ES2024, in Node 20; the project's TS lib is
 * ES2022): in a `u` regular expression a surrogate pair is one code point,
 * so only a lone surrogate matches \p{Cs}.
 */
const LONE_SURROGATE = /\p{Cs}/u;
function isWellFormed(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}
