import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { Logger } from "./log.js";
import { VaultError } from "./domain/errors.js";
import type { VaultErrorKind } from "./domain/errors.js";
import { ClosedError } from "./group-commit.js";

const STATUS_OF: Record<VaultErrorKind, ContentfulStatusCode> = {
  invalid: 400,
  limit: 402,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  gone: 410,
  too_large: 413,
};

/**
 * The one error type a handler or domain function throws to answer a request
 * with a 4xx (or a deliberate 5xx). `app.onError` turns it into the JSON
 * envelope `{error, message?}` (decisions.md section 10). Never put a secret
 * value or user input into `error` or `message`.
 */
export class ApiError extends Error {
  /**
   * @param status HTTP status code, e.g. 404.
   * @param error short human-readable reason, the `error` field of the body.
   * @param options.message optional longer explanation, the `message` field.
   * @param options.headers extra response headers (for example `Allow` on 405).
   */
  constructor(
    readonly status: ContentfulStatusCode,
    readonly error: string,
    readonly options: { message?: string; headers?: Record<string, string> } = {},
  ) {
    super(error);
    this.name = "ApiError";
  }
}

/**
 * Maps any thrown value to the response the client sees.
 * ApiError: its status and `{error, message?}`; VaultError (domain): the
 * status of its kind; ClosedError: 503 during shutdown. Anything else is logged with
 * its stack and answered exactly `500 {"error": "internal server error"}`
 * (decisions.md section 10): no internal detail leaves the server.
 */
export function errorResponse(err: unknown, c: Context, log: Logger): Response {
  if (err instanceof ApiError) {
    const body: { error: string; message?: string } = { error: err.error };
    if (err.options.message !== undefined) body.message = err.options.message;
    for (const [name, value] of Object.entries(err.options.headers ?? {})) c.header(name, value);
    return c.json(body, err.status);
  }
  if (err instanceof VaultError) {
    const body: { error: string; message?: string } = { error: err.error };
    if (err.options.message !== undefined) body.message = err.options.message;
    return c.json(body, STATUS_OF[err.kind]);
  }
  if (err instanceof ClosedError) {
    c.header("Retry-After", "1");
    return c.json({ error: "the vault is shutting down" }, 503);
  }
  log.error({ err, method: c.req.method, route: c.req.routePath }, "unhandled error");
  return c.json({ error: "internal server error" }, 500);
}
