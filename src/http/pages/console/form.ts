import type { Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import { ApiError } from "../../errors.js";
import type { AppEnv } from "../../context.js";

/**
 * The largest console form body, bytes: a value of the largest
 * VAULT_MAX_VALUE_BYTES (1 MiB), percent-encoded (up to 3 bytes a byte),
 * and the other fields (docs/console.md, "Limits").
 */
export const MAX_FORM_BYTES = 3 * 1024 * 1024 + 64 * 1024;
/** The largest sign-in body, bytes: a token is under 100 characters (docs/console.md, "Limits"). */
export const MAX_SIGNIN_BYTES = 4 * 1024;
/** The most fields a console form may carry; the largest form has under 16 (docs/console.md, "Limits"). */
export const MAX_FORM_FIELDS = 64;

/** Why a body was refused before any field was parsed: the status and a sentence for the page. */
export class FormRefused extends Error {
  constructor(readonly status: 400 | 415, message: string) {
    super(message);
  }
}

/** A read, unparsed form body: its raw text and, found by a scan that parses nothing, its `csrf` field. */
export interface RawForm {
  text: string;
  /** The decoded value of the first `csrf` field, or undefined when there is none. */
  csrf: string | undefined;
  /** The field limit, when the body has more fields than it (checkFieldCount refuses it); undefined within it. */
  tooMany: number | undefined;
}

const limiters = new Map<number, ReturnType<typeof bodyLimit>>();
function limiter(maxBytes: number): ReturnType<typeof bodyLimit> {
  let found = limiters.get(maxBytes);
  if (found === undefined) {
    found = bodyLimit({
      maxSize: maxBytes,
      onError: () => {
        throw new ApiError(413, "request body too large", { message: `a console form may be at most ${maxBytes} bytes`, headers: { Connection: "close" } });
      },
    });
    limiters.set(maxBytes, found);
  }
  return found;
}

function decode(part: string): string {
  try {
    return decodeURIComponent(part.replace(/\+/g, " "));
  } catch {
    return "";
  }
}

/**
 * Reads a console form body without parsing it (docs/console.md, "Limits"):
 * at most `maxBytes`, only `application/x-www-form-urlencoded` (what a
 * form without script sends; a multipart or other body is refused before a
 * byte of it is read); picks out the `csrf` field and counts the fields up
 * to `maxFields` + 1 by scanning, so the caller checks the CSRF token and
 * then the count (checkFieldCount) before anything is parsed.
 * @param maxBytes the body's limit, bytes.
 * @throws ApiError 413 over `maxBytes`; FormRefused 400 for a multipart
 *   body, 415 for another content type.
 */
export async function readRawForm(c: Context<AppEnv>, maxBytes: number, maxFields = MAX_FORM_FIELDS): Promise<RawForm> {
  const type = (c.req.header("content-type") ?? "").toLowerCase();
  if (!type.startsWith("application/x-www-form-urlencoded")) {
    throw new FormRefused(type.startsWith("multipart/") ? 400 : 415, "The console takes forms as application/x-www-form-urlencoded only.");
  }
  await limiter(maxBytes)(c, async () => {});
  const text = await c.req.text();
  // One scan, no parsing: the `csrf` field (first of its name) and the number of fields.
  const at = text.startsWith("csrf=") ? 0 : text.indexOf("&csrf=") + 1;
  let csrf: string | undefined;
  if (at > 0 || text.startsWith("csrf=")) {
    const end = text.indexOf("&", at);
    csrf = decode(text.slice(at + 5, end === -1 ? text.length : end));
  }
  let fields = text === "" ? 0 : 1;
  for (let i = text.indexOf("&"); i !== -1 && fields <= maxFields; i = text.indexOf("&", i + 1)) fields += 1;
  return { text, csrf, tooMany: fields > maxFields ? maxFields : undefined };
}

/**
 * Refuses a read form of more fields than its limit (readRawForm's count).
 * @throws FormRefused 400.
 */
export function checkFieldCount(raw: RawForm): void {
  if (raw.tooMany !== undefined) throw new FormRefused(400, `A console form may carry at most ${raw.tooMany} fields.`);
}

/**
 * The fields of a read form (the first of each name), strings only. Call
 * only after the session and CSRF checks.
 * @throws FormRefused 400 over the field limit (checkFieldCount).
 */
export function parseRawForm(raw: RawForm): Record<string, string> {
  checkFieldCount(raw);
  const out = Object.create(null) as Record<string, string>;
  for (const [k, v] of new URLSearchParams(raw.text)) if (out[k] === undefined) out[k] = v;
  return out;
}
