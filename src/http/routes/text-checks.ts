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

/** Most levels of nested arrays and objects in a request body, the body itself counting as one (docs/api.md). */
export const MAX_JSON_DEPTH = 64;

/** What makes a parsed JSON body unacceptable (jsonBodyFault). */
export type JsonFault = "too deep" | "lone surrogate";

/**
 * Walks a parsed JSON value (JSON.parse output) without recursion, so no
 * nesting can overflow the stack, and finds the first fault:
 *
 * - "too deep": arrays and objects nested more than `maxDepth` levels, the
 *   outermost one counting as level 1 (docs/api.md: 64). Every later walk
 *   of the body (valibot, JSON.stringify of metadata) is recursive, so the
 *   cap is checked here, first.
 * - "lone surrogate": a string (object keys included) that is not
 *   well-formed Unicode, as `"a\ud800b"` in JSON gives. Such a string cannot
 *   be stored as UTF-8 without turning into U+FFFD, so it would read back
 *   different from what was written.
 *
 * @returns the fault, or null when there is none.
 */
export function jsonBodyFault(value: unknown, maxDepth = MAX_JSON_DEPTH): JsonFault | null {
  // Two parallel stacks (containers and their levels): no tuple allocated per item.
  const containers: unknown[] = [value];
  const levels: number[] = [1];
  while (containers.length > 0) {
    const item = containers.pop();
    const level = levels.pop() as number;
    if (typeof item === "string") {
      if (!isWellFormed(item)) return "lone surrogate";
    } else if (item !== null && typeof item === "object") {
      if (level > maxDepth) return "too deep";
      if (Array.isArray(item)) {
        for (const child of item as unknown[]) {
          if (typeof child === "string") {
            if (!isWellFormed(child)) return "lone surrogate";
          } else if (typeof child === "object" && child !== null) {
            containers.push(child);
            levels.push(level + 1);
          }
        }
      } else {
        for (const [key, child] of Object.entries(item)) {
          if (!isWellFormed(key)) return "lone surrogate";
          if (typeof child === "string") {
            if (!isWellFormed(child)) return "lone surrogate";
          } else if (typeof child === "object" && child !== null) {
            containers.push(child);
            levels.push(level + 1);
          }
        }
      }
    }
  }
  return null;
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
