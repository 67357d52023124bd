/**
 * The errors a VaultClient throws. Neither ever carries a secret value or a
 * token: the API's error bodies never hold one (docs/contract.md §13).
 */

/**
 * The API answered with a status of 400 or more (docs/contract.md §13):
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
  /** The body's `message` (the API's explanation: the size limit, how to lift a limit), or undefined when it has none. */
  readonly detail: string | undefined;
  /** The Retry-After header in seconds (429, 503), or undefined when absent or not a number of seconds. */
  readonly retryAfter: number | undefined;

  /**
   * @param status the HTTP status (>= 400).
   * @param error the body's `error`.
   * @param message the body's `message`, if any.
   * @param request `METHOD /path` of the failed request.
   * @param retryAfter the Retry-After header in seconds, if any.
   */
  constructor(status: number, error: string, message: string | undefined, request: string, retryAfter?: number) {
    super(message ?? error);
    this.name = "VaultApiError";
    this.status = status;
    this.error = error;
    this.request = request;
    this.detail = message;
    this.retryAfter = retryAfter;
  }
}

/**
 * Something answered at the vault's address, but not as an ephemeral-vault
 * does: an error status without the vault's JSON error body `{error,
 * message?}`, or a success whose body is not the JSON the API sends (another
 * web server, a proxy's error page, a wrong port). `status` and
 * `contentType` say what came back; the message names the address:
 * `the server at http://127.0.0.1:8080 is not an ephemeral-vault (HTTP 404, text/html)`.
 */
export class VaultProtocolError extends Error {
  /** The base address the request went to. */
  readonly addr: string;
  /** The HTTP status that came back. */
  readonly status: number;
  /** The response's Content-Type without parameters, or `no content type`. */
  readonly contentType: string;
  /** Method and path of the request, e.g. `GET /secrets/db`. */
  readonly request: string;

  /**
   * @param addr the base address of the vault.
   * @param status the HTTP status of the answer.
   * @param contentType the answer's Content-Type header, or null.
   * @param request `METHOD /path` of the request.
   */
  constructor(addr: string, status: number, contentType: string | null, request: string) {
    const type = contentType?.split(";")[0]?.trim() || "no content type";
    super(`the server at ${addr} is not an ephemeral-vault (HTTP ${status}, ${type})`);
    this.name = "VaultProtocolError";
    this.addr = addr;
    this.status = status;
    this.contentType = type;
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
 * `.` or `..`, `receipt` for a text that is neither a receipt token nor a
 * receipt link. The message states the rule and never repeats the value.
 */
export class VaultInputError extends Error {
  /** What was refused: a secret key, an id or name (org, principal, key, webhook, role), or a receipt. */
  readonly field: "key" | "id" | "receipt";

  /** @param field `key`, `id` or `receipt`. */
  constructor(field: "key" | "id" | "receipt") {
    super(
      field === "key"
        ? "invalid secret key: it must not start or end with / or have an empty, . or .. segment"
        : field === "id"
          ? "invalid id or name: it must not be empty, . or .."
          : "not a receipt: expected vrc_ and base64url characters, or a link ending in /receipts/vrc_...",
    );
    this.name = "VaultInputError";
    this.field = field;
  }
}

/**
 * The vault could not be reached (refused connection, DNS failure, reset),
 * or no whole answer came within the client's `timeoutMs`: no usable HTTP
 * response. `addr` is the address tried; `cause` is the underlying fetch
 * error; `timeoutMs` is set (milliseconds) when the time ran out, and the
 * message then says `no answer within 30 s`.
 */
export class VaultConnectionError extends Error {
  /** The vault address tried, e.g. http://127.0.0.1:8484. */
  readonly addr: string;
  /** The time limit that ran out, milliseconds; undefined for any other failure. */
  readonly timeoutMs: number | undefined;
  /**
   * True when the TLS handshake refused the vault's certificate (an unknown
   * CA, self-signed, expired, or not for this host name): trust its CA
   * (the CLI and MCP: VAULT_CACERT; this client: a `fetch` that trusts it,
   * docs/client.md).
   */
  readonly untrustedCertificate: boolean;

  /**
   * @param addr the base address of the vault.
   * @param cause the error fetch threw.
   * @param timeoutMs the time limit, milliseconds, when it ran out.
   */
  constructor(addr: string, cause: unknown, timeoutMs?: number) {
    let reason = timeoutMs !== undefined ? `no answer within ${formatMs(timeoutMs)}` : cause instanceof Error ? reasonOf(cause) : String(cause);
    const untrusted = timeoutMs === undefined && CERTIFICATE_CODES.has(reason);
    if (untrusted) reason = `its TLS certificate is not trusted: ${reason}`;
    super(`vault not reachable at ${addr} (${reason})`, { cause });
    this.name = "VaultConnectionError";
    this.addr = addr;
    this.timeoutMs = timeoutMs;
    this.untrustedCertificate = untrusted;
  }
}

/** The codes of Node's TLS for a certificate it does not trust (OpenSSL's verify errors, and a host name mismatch). */
const CERTIFICATE_CODES = new Set([
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_UNTRUSTED",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "CERT_REVOKED",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);

/** A wait as a person reads it: `2 h`, `10 min` for whole hours or minutes, else as formatMs(). */
function formatWait(ms: number): string {
  if (ms >= 3_600_000 && ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000} min`;
  return formatMs(ms);
}

/** `30 s` for 30000, `1.5 s` for 1500, `250 ms` below a second. */
function formatMs(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 100) / 10} s`;
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

/**
 * awaitAnswer() gave up: nobody answered the request within `timeoutMs`
 * (docs/requests.md, "From the command line, the client and MCP"). Nothing
 * was read: the request is still open, and waiting again is fine.
 */
export class AnswerTimeoutError extends Error {
  /** The request's id. */
  readonly requestId: string;
  /** The time waited, milliseconds. */
  readonly timeoutMs: number;

  /**
   * @param requestId the request's id.
   * @param timeoutMs the time waited, milliseconds.
   */
  constructor(requestId: string, timeoutMs: number) {
    super(`no answer within ${formatWait(timeoutMs)}; the request is still open (nothing was read)`);
    this.name = "AnswerTimeoutError";
    this.requestId = requestId;
    this.timeoutMs = timeoutMs;
  }
}
