import { ConfigError } from "../config.js";

/** A `{{vault:KEY}}` or `{{vault:KEY|base64}}` reference, whole (docs/mcp.md, "http_request"). */
const REFERENCE = /\{\{vault:([^{}|\s]+)(\|base64)?\}\}/g;
/** The start of any reference, well formed or not. */
const OPENING = "{{vault:";

/** A JSON body as the agent gives it: strings, numbers, booleans, null, arrays and objects. */
export type JsonBody = string | number | boolean | null | JsonBody[] | { [key: string]: JsonBody };

/**
 * The keys that `text` references (`{{vault:KEY}}`, optionally
 * `|base64`), in order, each once.
 * @throws ConfigError (a tool error) for a `{{vault:` that does not open a
 *   well-formed reference (`{{vault:}}`, `{{vault:k|hex}}`, unclosed): it
 *   would otherwise be sent as text, which is never what was meant.
 */
export function referencedKeys(text: string): string[] {
  const keys: string[] = [];
  const starts = new Set<number>();
  for (const match of text.matchAll(REFERENCE)) {
    starts.add(match.index);
    const key = match[1] as string;
    if (!keys.includes(key)) keys.push(key);
  }
  for (let at = text.indexOf(OPENING); at >= 0; at = text.indexOf(OPENING, at + 1)) {
    if (!starts.has(at)) throw new ConfigError("malformed secret reference: write {{vault:KEY}} or {{vault:KEY|base64}} (a key has no space, {, } or |)");
  }
  return keys;
}

/** True when `text` holds anything that looks like a reference. */
export function hasReference(text: string): boolean {
  return text.includes(OPENING);
}

/**
 * `text` with every reference replaced by its secret's value (`values`:
 * key -> value), or by the value's base64 (standard, padded) for
 * `|base64`, as `Authorization: Basic` needs for a stored `user:password`.
 */
export function substitute(text: string, values: ReadonlyMap<string, string>): string {
  return text.replace(REFERENCE, (_whole, key: string, base64: string | undefined) => {
    const value = values.get(key) ?? "";
    return base64 === undefined ? value : Buffer.from(value, "utf8").toString("base64");
  });
}

/**
 * The keys referenced by the strings of a JSON body (object values and
 * array items, at any depth; never object keys, where a reference is refused).
 * @throws ConfigError for a reference in an object key, or a malformed one.
 */
export function jsonReferencedKeys(body: JsonBody, into: string[] = []): string[] {
  if (typeof body === "string") {
    for (const key of referencedKeys(body)) if (!into.includes(key)) into.push(key);
  } else if (Array.isArray(body)) {
    for (const item of body) jsonReferencedKeys(item, into);
  } else if (body !== null && typeof body === "object") {
    for (const [name, item] of Object.entries(body)) {
      if (hasReference(name)) throw new ConfigError("a secret reference may stand in a JSON body's string values, not in its keys");
      jsonReferencedKeys(item, into);
    }
  }
  return into;
}

/** A JSON body with every string substituted (substitute): the values are escaped by JSON.stringify later, so a value with `"` stays one string. */
export function substituteJson(body: JsonBody, values: ReadonlyMap<string, string>): JsonBody {
  if (typeof body === "string") return substitute(body, values);
  if (Array.isArray(body)) return body.map((item) => substituteJson(item, values));
  if (body !== null && typeof body === "object") return Object.fromEntries(Object.entries(body).map(([name, item]) => [name, substituteJson(item, values)]));
  return body;
}
