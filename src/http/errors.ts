import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { Logger } from "../log/log.js";
import { VaultError } from "../model/errors.js";
import type { VaultErrorKind } from "../model/errors.js";
import { ClosedError } from "../model/engine-errors.js";
import { DatabaseUnavailableError } from "../store/work.js";

const STATUS_OF: Record<VaultErrorKind, ContentfulStatusCode> = {
  invalid: 400,
  unauthorized: 401,
  limit: 402,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  gone: 410,
  too_large: 413,
  full: 429,
};

/**
 * The one error type a handler or domain function throws to answer a request
 * with a 4xx (or a deliberate 5xx). `app.onError` turns it into the JSON
 * envelope `{error, message?}` (docs/contract.md §13). Never put a secret
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

/** What the client is told: a status, `{error, message?}`, and headers. */
interface Answer {
  status: ContentfulStatusCode;
  error: string;
  message?: string | undefined;
  headers?: Record<string, string> | undefined;
}

/**
 * The one mapping of the errors that reach the handler to their answer:
 * ApiError (routes) its own status; VaultError (domain) the status of its
 * kind; ClosedError (group commit) 503 with Retry-After during shutdown;
 * DatabaseUnavailableError (PostgreSQL connection lost or refused) 503 with
 * Retry-After, nothing acknowledged (docs/scaling.md, "When the database
 * goes away"). undefined for anything else.
 */
function answerOf(err: unknown): Answer | undefined {
  if (err instanceof ApiError) {
    return { status: err.status, error: err.error, message: err.options.message, headers: err.options.headers };
  }
  if (err instanceof VaultError) return { status: STATUS_OF[err.kind], error: err.error, message: err.options.message };
  if (err instanceof ClosedError) {
    return { status: 503, error: "the vault is shutting down", headers: { "Retry-After": "1" } };
  }
  if (err instanceof DatabaseUnavailableError) {
    return { status: 503, error: "the database is unavailable", message: "try again shortly", headers: { "Retry-After": "1" } };
  }
  return undefined;
}

/**
 * Maps any thrown value to the response the client sees, by answerOf(), as
 * the JSON envelope `{error, message?}` (docs/contract.md §13). Anything
 * else is logged with its stack and answered exactly
 * `500 {"error": "internal server error"}`: no internal detail leaves the server.
 */
export function errorResponse(err: unknown, c: Context, log: Logger): Response {
  const answer = answerOf(err);
  if (err instanceof DatabaseUnavailableError) {
    // The driver's message only (no stack, no URL): one line per request the outage cut.
    log.warn({ method: c.req.method, route: c.req.routePath, reason: err.message }, "database unavailable: answered 503");
  }
  if (answer === undefined) {
    log.error({ err, method: c.req.method, route: c.req.routePath }, "unhandled error");
    return c.json({ error: "internal server error" }, 500);
  }
  const body: { error: string; message?: string } = { error: answer.error };
  if (answer.message !== undefined) body.message = answer.message;
  for (const [name, value] of Object.entries(answer.headers ?? {})) c.header(name, value);
  return c.json(body, answer.status);
}
