/**
 * The errors a VaultClient throws. Neither ever carries a secret value or a
 * token: the API's error bodies never hold one (interface.md section 7).
 */

/**
 * The API answered with a status of 400 or more (interface.md section 7):
 * `status` is the HTTP status, `error` the body's `error`, and `message` the
 * body's `message` when it has one (402, 410, some 400s), else its `error`.
 */
export class VaultApiError extends Error {
  /** HTTP status, e.g. 404. */
  readonly status: number;
  /** The body's `error` (a human-readable message); the status text when the body is not JSON. */
  readonly error: string;
  /** Method and path of the request, e.g. `GET /secrets/db`. */
  readonly request: string;

  /**
   * @param status the HTTP status (>= 400).
   * @param error the body's `error`.
   * @param message the body's `message`, if any.
   * @param request `METHOD /path` of the failed request.
   */
  constructor(status: number, error: string, message: string | undefined, request: string) {
    super(message ?? error);
    this.name = "VaultApiError";
    this.status = status;
    this.error = error;
    this.request = request;
  }
}

/**
 * A key, id or name the client refuses before sending any request: joined
 * into the URL path, it would name another route, because the URL parser
 * resolves `.` and `..` segments (and their `%2e` forms) and an empty
 * segment shifts the route (docs/client.md "Secret verbs"). `field` says
 * which: `key` for a secret key with an empty, `.` or `..` segment (a
 * leading or trailing `/` included), `id` for an id or name that is empty,
 * `.` or `..`. The message states the rule and never repeats the value.
 */
export class VaultInputError extends Error {
  /** What was refused: a secret key, or an id or name (org, principal, key, webhook, role). */
  readonly field: "key" | "id";

  /** @param field `key` or `id`. */
  constructor(field: "key" | "id") {
    super(
      field === "key"
        ? "invalid secret key: it must not start or end with / or have an empty, . or .. segment"
        : "invalid id or name: it must not be empty, . or ..",
    );
    this.name = "VaultInputError";
    this.field = field;
  }
}

/**
 * The vault could not be reached (refused connection, DNS failure, reset,
 * timeout): no HTTP response came back. `addr` is the address tried; `cause`
 * is the underlying fetch error.
 */
export class VaultConnectionError extends Error {
  /** The vault address tried, e.g. http://127.0.0.1:8484. */
  readonly addr: string;

  /**
   * @param addr the base address of the vault.
   * @param cause the error fetch threw.
   */
  constructor(addr: string, cause: unknown) {
    const reason = cause instanceof Error ? reasonOf(cause) : String(cause);
    super(`vault not reachable at ${addr} (${reason})`, { cause });
    this.name = "VaultConnectionError";
    this.addr = addr;
  }
}

/**
 * Why a fetch failed: the system error code (undici nests it in `cause`),
 * e.g. ECONNREFUSED, else the innermost cause's message.
 */
function reasonOf(error: Error): string {
  let current: unknown = error;
  let message = error.message;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    const code = (current as Error & { code?: unknown }).code;
    if (typeof code === "string") return code;
    message = current.message;
    current = current.cause;
  }
  return message;
}
