import { VaultApiError, VaultConnectionError, VaultInputError } from "./errors.js";

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

/**
 * The HTTP layer of VaultClient: base address, bearer token, JSON in and
 * out, and the two error classes.
 */
export class Transport {
  readonly addr: string;
  readonly #token: string | undefined;
  readonly #fetch: FetchLike;

  /**
   * @param addr base address without a trailing slash, e.g. http://127.0.0.1:8484.
   * @param token bearer token (master key, scoped key or principal key), or undefined.
   * @param fetchFn the fetch to use.
   */
  constructor(addr: string, token: string | undefined, fetchFn: FetchLike) {
    this.addr = addr.replace(/\/+$/, "");
    this.#token = token;
    this.#fetch = fetchFn;
  }

  /**
   * Sends `call` and returns the raw Response when its status is below 400.
   * @throws VaultApiError for a status of 400 or more (body `{error, message?}`).
   * @throws VaultConnectionError when no response came back.
   */
  async send(call: Call): Promise<Response> {
    let url = this.addr + call.path;
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(call.query ?? {})) {
      if (value !== undefined) params.set(name, String(value));
    }
    const qs = params.toString();
    if (qs) url += `?${qs}`;
    const headers: Record<string, string> = { Accept: "application/json" };
    if (this.#token !== undefined && !call.anonymous) headers.Authorization = `Bearer ${this.#token}`;
    const init: RequestInit = { method: call.method, headers };
    if (call.body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(call.body);
    }
    let res: Response;
    try {
      res = await this.#fetch(url, init);
    } catch (cause) {
      throw new VaultConnectionError(this.addr, cause);
    }
    if (res.status >= 400) throw await apiError(res, `${call.method} ${call.path}`);
    return res;
  }

  /**
   * Sends `call` and parses the JSON response body as T (the type comes from
   * the server's OpenAPI document, src/client/schema.d.ts).
   * @throws as send().
   */
  async json<T>(call: Call): Promise<T> {
    const res = await this.send(call);
    return (await res.json()) as T;
  }
}

/** Builds the VaultApiError of a failed response from its `{error, message?}` body. */
async function apiError(res: Response, request: string): Promise<VaultApiError> {
  let error = res.statusText || `HTTP ${res.status}`;
  let message: string | undefined;
  if (res.status !== 204 && res.headers.get("content-type")?.includes("json")) {
    try {
      const body: unknown = await res.json();
      if (body && typeof body === "object") {
        const fields = body as { error?: unknown; message?: unknown };
        if (typeof fields.error === "string") error = fields.error;
        if (typeof fields.message === "string") message = fields.message;
      }
    } catch {
      // Not JSON after all: keep the status text.
    }
  } else {
    await res.body?.cancel();
  }
  return new VaultApiError(res.status, error, message, request);
}
