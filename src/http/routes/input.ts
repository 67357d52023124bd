import type { IncomingMessage } from "node:http";
import { Readable } from "node:stream";
import type { Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import * as v from "valibot";
import { decodeCursor as decodeTagged, encodeCursor as encodeTagged } from "../../domain/cursor.js";
import { ApiError } from "../errors.js";
import { requestHeader } from "../auth.js";
import { jsonBodyFault, MAX_JSON_DEPTH } from "./text-checks.js";

const JSON_TYPE = /^application\/json\s*(;.*)?$/i;
const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Largest request body, bytes (docs/contract.md §5): larger gives 413. */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * The body limit, applied when a handler reads its body, that is after the
 * route's authorization: 401, then 403, then 413 (docs/contract.md §8).
 * A declared Content-Length over the limit is refused before reading; a
 * chunked body is counted as it arrives.
 */
const limitBody = bodyLimit({
  maxSize: MAX_BODY_BYTES,
  onError: () => {
    throw tooLarge();
  },
});

/** The 413 of a body over MAX_BODY_BYTES; the rest is not read, so the connection closes. */
function tooLarge(): ApiError {
  return new ApiError(413, "request body too large", {
    message: `the body may be at most ${MAX_BODY_BYTES} bytes`,
    headers: { Connection: "close" },
  });
}

/**
 * The raw body, at most MAX_BODY_BYTES (413 beyond). On the Node server it
 * is read straight from the IncomingMessage, which the adapter hands over as
 * `c.env.incoming`: building a web Request and its stream for a small JSON
 * body costs more than the rest of a create. Elsewhere (in-process
 * `app.request()` in tests), or when something already touched the stream,
 * through Hono's bodyLimit and the Request.
 * @throws ApiError 413, or 400 when the client breaks off the body.
 */
async function readBodyBytes(c: Context): Promise<Uint8Array> {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (incoming instanceof Readable && incoming.readableFlowing === null && !incoming.readableDidRead) {
    return readIncoming(incoming);
  }
  await limitBody(c, async () => {});
  return new Uint8Array(await c.req.arrayBuffer());
}

function readIncoming(incoming: IncomingMessage): Promise<Buffer> {
  const declared = Number(incoming.headers["content-length"]);
  if (declared > MAX_BODY_BYTES) return Promise.reject(tooLarge());
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => {
      incoming.off("data", onData).off("end", onEnd).off("error", onFail).off("close", onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        done();
        incoming.pause();
        reject(tooLarge());
      } else {
        chunks.push(chunk);
      }
    };
    const onEnd = () => {
      done();
      resolve(Buffer.concat(chunks, size));
    };
    const onFail = () => {
      done();
      reject(new ApiError(400, "the request body could not be read"));
    };
    const onClose = () => {
      if (!incoming.readableEnded) onFail();
    };
    incoming.on("data", onData).on("end", onEnd).on("error", onFail).on("close", onClose);
  });
}

/**
 * Reads a POST/PATCH body as a JSON object (docs/contract.md §14):
 * `Content-Type: application/json` (parameters such as charset allowed),
 * valid UTF-8, parsable, an object, nested at most MAX_JSON_DEPTH (64)
 * levels deep (the body object counting as one: every later walk of the
 * body is recursive), and every string in it well-formed Unicode (a lone surrogate escape such as `"a\ud800b"` would be stored as
 * U+FFFD and read back different). Anything else: 400. A body over
 * MAX_BODY_BYTES: 413.
 * @returns the parsed object (unknown fields are kept, to be ignored by the schema).
 * @throws ApiError 400 or 413.
 */
export async function readJsonObject(c: Context): Promise<Record<string, unknown>> {
  // From the Node request's own headers: no web Headers object built for one read.
  const type = requestHeader(c, "content-type") ?? "";
  if (!JSON_TYPE.test(type.trim())) throw new ApiError(400, "Content-Type must be application/json");
  const bytes = await readBodyBytes(c);
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new ApiError(400, "body is not valid UTF-8");
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new ApiError(400, "body is not valid JSON");
  }
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw new ApiError(400, "body must be a JSON object");
  }
  const fault = jsonBodyFault(body);
  if (fault === "too deep") throw new ApiError(400, `body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep`);
  if (fault !== null) throw new ApiError(400, "body contains a lone surrogate (\\uD800-\\uDFFF without its pair)");
  return body as Record<string, unknown>;
}

/**
 * A JSON body with its top-level `null` fields left out (docs/contract.md
 * §14): `null` in an optional request field (`"ttl_seconds": null`,
 * `"max_reads": null`, `"expires_at": null`) means the field is omitted, and
 * `null` in a required one is refused by the schema like a missing field.
 * @param body the object readJsonObject returned.
 * @returns `body` itself when it holds no `null`, else a copy without those fields.
 */
export function withoutNulls(body: Record<string, unknown>): Record<string, unknown> {
  let out: Record<string, unknown> | undefined;
  for (const name in body) {
    if (body[name] !== null) continue;
    if (out === undefined) out = Object.assign({}, body);
    delete out[name];
  }
  return out ?? body;
}

/**
 * Validates input against a valibot schema at the edge. The first issue's
 * message (written in the schema, never echoing the input) becomes the 400.
 * @throws ApiError 400.
 */
export function parse<S extends v.GenericSchema>(schema: S, input: unknown): v.InferOutput<S> {
  const result = v.safeParse(schema, input, { abortEarly: true });
  if (result.success) return result.output;
  const issue = result.issues[0];
  const path = issue?.path?.map((p) => String(p.key)).join(".");
  const reason = issue?.message ?? "invalid input";
  const invalid = invalidErrorOf(schema, issue?.path?.[0]?.key);
  if (invalid !== undefined) throw new ApiError(400, invalid, { message: reason });
  throw new ApiError(400, path && !reason.startsWith(path) ? `${path}: ${reason}` : reason);
}

/** A schema made by invalidAs(): its failure answers this `error`, the rule being the `message`. */
export type InvalidAs<S extends v.GenericSchema> = S & { readonly invalid: string };

/**
 * Marks a field's schema (an entry of a v.object: a path parameter such as
 * `{key}`) so that parse() answers its failure 400 `error`, the schema's
 * own message (the rule, never the input) as `message`: the path key's
 * `400 invalid secret key` (docs/api.md "Global secrets").
 * @returns the same schema, marked.
 */
export function invalidAs<S extends v.GenericSchema>(error: string, schema: S): InvalidAs<S> {
  return Object.assign(schema, { invalid: error });
}

function isObjectSchema(schema: v.GenericSchema): schema is v.ObjectSchema<v.ObjectEntries, undefined> {
  return schema.type === "object" && "entries" in schema;
}

/** The invalidAs() error of the object entry `key` of `schema`, if it has one. */
function invalidErrorOf(schema: v.GenericSchema, key: unknown): string | undefined {
  if (typeof key !== "string" || !isObjectSchema(schema)) return undefined;
  const entry = schema.entries[key];
  return entry !== undefined && "invalid" in entry && typeof entry.invalid === "string" ? entry.invalid : undefined;
}

/** Reads the JSON body and validates it: readJsonObject() then parse(). */
export async function readBody<S extends v.GenericSchema>(c: Context, schema: S): Promise<v.InferOutput<S>> {
  return parse(schema, await readJsonObject(c));
}

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

/** The `cursor` query parameter of paged lists: an opaque string, checked by decodeCursor(). */
export const cursorParam = v.optional(v.pipe(v.string(), v.description("next_cursor of the previous page")));

/** Pagination of list endpoints (docs/contract.md §5): limit 1-1000 (default 1000) and cursor. */
export const pageQuery = v.object({
  limit: v.optional(v.pipe(queryInt("limit", 1, 1000), v.description("integer 1-1000, default 1000"))),
  cursor: cursorParam,
});

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

/** Latest time any input may name (expires_at, valid_after, valid_before, since, until): 9999-12-31T23:59:59Z, Unix seconds. */
export const MAX_UNIX_SECONDS = 253_402_300_799;

/** Seconds from milliseconds, for the API (docs/contract.md §5). */
export function seconds(ms: number): number;
export function seconds(ms: number | null): number | null;
export function seconds(ms: number | null): number | null {
  return ms === null ? null : Math.floor(ms / 1000);
}
