import { VaultApiError, VaultConnectionError, VaultInputError, VaultProtocolError } from "./errors.js";
import { connectionRetryable, DEFAULT_RETRY, newIdempotencyKey, pause, retryDelay } from "./retry.js";
import type { RetryClass, RetryOptions } from "./retry.js";

/** The fetch function a client uses (globalThis.fetch or a caller's own). */
export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

/** Query parameters; undefined values are left out. */
export type Query = Record<string, string | number | undefined>;

/** One request to the vault. */
export interface Call {
  method: "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** Path with its segments already encoded (see encodeKey). */
  path: string;
  query?: Query | undefined;
  body?: unknown;
  /** Send no Authorization header (GET /health). */
  anonymous?: boolean;
  /** How errors name the request instead of `METHOD path` (a path holding a capability, such as a share id). */
  label?: string | undefined;
  /**
   * The route takes `Idempotency-Key` (docs/api.md, "Retries"): the call
   * sends a fresh key, the same one on each of its retries, so a 503 or a cut
   * connection is retried without the change or the read happening twice.
   * Without it a GET or HEAD is retried as changing nothing, and any other
   * method only when its connection never opened.
   */
  idempotent?: boolean;
}

/** The request header of a retry-safe call (docs/api.md, "Retries: `Idempotency-Key`"). */
export const IDEMPOTENCY_HEADER = "Idempotency-Key";

/** How a call may be retried (retry.ts RetryClass): keyed, safe (GET/HEAD) or only when nothing was sent. */
function retryClassOf(call: Call): RetryClass {
  if (call.idempotent === true) return "keyed";
  return call.method === "GET" || call.method === "HEAD" ? "safe" : "unsent";
}

/**
 * Whether a path segment would leave its route once in a URL: empty, `.` or
 * `..` (the URL parser resolves dot segments; encodeURIComponent leaves dots
 * as they are, and encodes `%`, so `%2e` in a value stays literal).
 */
function leavesRoute(segment: string): boolean {
  return segment === "" || segment === "." || segment === "..";
}

/**
 * Encodes a secret key for a path: each `/`-separated segment with
 * encodeURIComponent, the `/` kept (keys may contain `/`; the server's
 * `:key{.+}` routes take the rest of the path). The vault refuses such keys
 * too (docs/api.md "Global secrets"); the client refuses them first so no
 * request goes to another route.
 * @param key a secret key, e.g. `prod/db_password`.
 * @returns the encoded path part, e.g. `prod/db_password`.
 * @throws VaultInputError (`field: "key"`) when a segment is empty, `.` or
 *   `..` (a leading, trailing or doubled `/` makes an empty one).
 */
export function encodeKey(key: string): string {
  const segments = key.split("/");
  if (segments.some(leavesRoute)) throw new VaultInputError("key");
  return segments.map(encodeURIComponent).join("/");
}

/**
 * Encodes one path parameter (an id or name) whole, `/` included.
 * @throws VaultInputError (`field: "id"`) when it is empty, `.` or `..`.
 */
export function seg(value: string): string {
  if (leavesRoute(value)) throw new VaultInputError("id");
  return encodeURIComponent(value);
}

/** Time limits and retries of a Transport. */
export interface TransportLimits {
  /** Milliseconds for one whole call (every attempt, the waits between them, answer and body); 0 or Infinity: no limit. */
  timeoutMs: number;
  /** Aborts every request of this client; an aborted request rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
  /** How a lost answer is retried (retry.ts); default DEFAULT_RETRY; `attempts: 1`: never. */
  retry?: RetryOptions | undefined;
}

/**
 * The HTTP layer of VaultClient: base address, bearer token, JSON in and
 * out, the time limit, the retries (docs/client.md, "Retries") and the
 * error classes.
 */
export class Transport {
  readonly addr: string;
  readonly #token: string | undefined;
  readonly #fetch: FetchLike;
  readonly #limits: TransportLimits;

  /**
   * @param addr base address without a trailing slash, e.g. http://127.0.0.1:8484.
   * @param token bearer token (master key, scoped key or principal key), or undefined.
   * @param fetchFn the fetch to use.
   * @param limits timeoutMs (milliseconds per request) and an optional AbortSignal.
   */
  constructor(addr: string, token: string | undefined, fetchFn: FetchLike, limits: TransportLimits = { timeoutMs: 0 }) {
    this.addr = addr.replace(/\/+$/, "");
    this.#token = token;
    this.#fetch = fetchFn;
    this.#limits = limits;
  }

  /**
   * Sends `call` and returns the raw Response when its status is below 400
   * (the body left unread).
   * @throws VaultApiError for a status of 400 or more with the vault's body `{error, message?}`.
   * @throws VaultProtocolError for a status of 400 or more without it (not a vault).
   * @throws VaultConnectionError when no response came back in time.
   * @throws the signal's reason when the caller's signal aborted it.
   */
  async send(call: Call): Promise<Response> {
    return this.#exchange(call, async (res) => {
      await res.body?.cancel();
      return res;
    });
  }

  /**
   * Sends `call` and parses the JSON response body as T (the type comes from
   * the server's OpenAPI document, schema.d.ts beside this file). The time limit
   * covers the body too.
   * @throws as send(); VaultProtocolError when a success's body is not JSON.
   */
  async json<T>(call: Call): Promise<T> {
    return (await this.answer<T>(call)).body;
  }

  /**
   * As json(), with the success's status too (a PUT answers 201 for a
   * create, 200 for a replace).
   * @throws as json().
   */
  async answer<T>(call: Call): Promise<{ status: number; body: T }> {
    return this.#exchange(call, async (res) => {
      const text = await res.text();
      try {
        return { status: res.status, body: JSON.parse(text) as T };
      } catch {
        throw new VaultProtocolError(this.addr, res.status, res.headers.get("content-type"), describe(call));
      }
    });
  }

  /**
   * One call under the time limit and the caller's signal, retried by the
   * policy (docs/client.md, "Retries"): a 503, or a connection failure
   * connectionRetryable() accepts, is sent again after retryDelay() while
   * attempts and time remain; a keyed call sends the same Idempotency-Key
   * each time. What the last attempt met is thrown as a single attempt
   * would throw it. `read` consumes a success's response.
   */
  async #exchange<T>(call: Call, read: (res: Response) => Promise<T>): Promise<T> {
    const { timeoutMs, signal } = this.#limits;
    const policy = this.#limits.retry ?? DEFAULT_RETRY;
    signal?.throwIfAborted();
    const controller = new AbortController();
    let timedOut = false;
    const limited = timeoutMs > 0 && Number.isFinite(timeoutMs);
    const deadline = limited ? Date.now() + timeoutMs : Number.POSITIVE_INFINITY;
    const timer = limited
      ? setTimeout(() => {
          timedOut = true;
          controller.abort(new Error(`timed out after ${timeoutMs} ms`));
        }, timeoutMs)
      : undefined;
    const onAbort = () => controller.abort(signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    // What an abort became: the caller's reason, or the timeout as a connection error; else `other`.
    const failed = (cause: unknown, other: unknown): unknown => {
      if (signal?.aborted) return signal.reason;
      if (timedOut) return new VaultConnectionError(this.addr, cause, timeoutMs);
      return other;
    };
    const kind = retryClassOf(call);
    // One attempt (retries off) needs no key: nothing is sent again under it.
    const key = kind === "keyed" && policy.attempts > 1 ? newIdempotencyKey() : undefined;
    // Whether attempt `attempt` may be followed by another after a wait (false: throw what it met).
    const again = async (attempt: number, retryAfter: number | undefined): Promise<boolean> => {
      if (attempt >= policy.attempts || signal?.aborted || timedOut) return false;
      const wait = retryDelay(policy, attempt + 1, retryAfter);
      if (wait === undefined || Date.now() + wait >= deadline) return false;
      await pause(wait, controller.signal);
      // The caller's abort during the wait rejects with its reason, as during a request.
      if (signal?.aborted) throw signal.reason;
      return !timedOut;
    };
    try {
      for (let attempt = 1; ; attempt++) {
        let res: Response;
        try {
          res = await this.#fetch(this.#url(call), this.#init(call, controller.signal, key));
        } catch (cause) {
          const err = failed(cause, new VaultConnectionError(this.addr, cause));
          if (err instanceof VaultConnectionError && err.timeoutMs === undefined && connectionRetryable(cause, kind) && (await again(attempt, undefined))) continue;
          throw err;
        }
        let retryAfter: number | undefined;
        try {
          if (res.status >= 400) {
            retryAfter = parseRetryAfter(res.headers.get("retry-after"));
            throw await apiError(res, this.addr, describe(call));
          }
          return await read(res);
        } catch (err) {
          const out = failed(err, err);
          // A 503 (the outcome unknown: a failover) or a body cut off mid-way; never for a write without a key.
          const lost = res.status === 503 || (res.status < 400 && connectionRetryable(err, kind));
          const retryable = out === err && kind !== "unsent" && lost;
          if (retryable && (await again(attempt, retryAfter))) continue;
          throw out;
        }
      }
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    }
  }

  #url(call: Call): string {
    let url = this.addr + call.path;
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(call.query ?? {})) {
      if (value !== undefined) params.set(name, String(value));
    }
    const qs = params.toString();
    if (qs) url += `?${qs}`;
    return url;
  }

  #init(call: Call, signal: AbortSignal, idempotencyKey: string | undefined): RequestInit {
    const headers: Record<string, string> = { Accept: "application/json" };
    if (this.#token !== undefined && !call.anonymous) headers.Authorization = `Bearer ${this.#token}`;
    if (idempotencyKey !== undefined) headers[IDEMPOTENCY_HEADER] = idempotencyKey;
    const init: RequestInit = { method: call.method, headers, signal };
    if (call.body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(call.body);
    }
    return init;
  }
}

/** `GET /secrets/db`: what an error names as its request. */
function describe(call: Call): string {
  return call.label ?? `${call.method} ${call.path}`;
}

/**
 * Builds the error of a failed response: VaultApiError from the vault's
 * `{error: string, message?: string}` JSON body (with Retry-After in
 * seconds), VaultProtocolError when the body is not that shape (another web
 * server answered). A HEAD answer has no body: its status is taken as the
 * vault's when it says JSON (the vault's content type).
 */
async function apiError(res: Response, addr: string, request: string): Promise<Error> {
  const contentType = res.headers.get("content-type");
  const retryAfter = parseRetryAfter(res.headers.get("retry-after"));
  const json = contentType?.toLowerCase().includes("json") === true;
  if (request.startsWith("HEAD ")) {
    await res.body?.cancel();
    return json ? new VaultApiError(res.status, res.statusText || `HTTP ${res.status}`, undefined, request, retryAfter) : new VaultProtocolError(addr, res.status, contentType, request);
  }
  if (!json) {
    await res.body?.cancel();
    return new VaultProtocolError(addr, res.status, contentType, request);
  }
  let body: unknown;
  try {
    body = JSON.parse(await res.text());
  } catch {
    return new VaultProtocolError(addr, res.status, contentType, request);
  }
  const fields = (body !== null && typeof body === "object" ? body : {}) as { error?: unknown; message?: unknown };
  if (typeof fields.error !== "string") return new VaultProtocolError(addr, res.status, contentType, request);
  const message = typeof fields.message === "string" ? fields.message : undefined;
  return new VaultApiError(res.status, fields.error, message, request, retryAfter);
}

/** Retry-After as whole seconds (the delta form); undefined when absent or an HTTP date. */
function parseRetryAfter(value: string | null): number | undefined {
  if (value === null || !/^\s*\d+\s*$/.test(value)) return undefined;
  return Number(value.trim());
}
