/**
 * The retry rules of the Transport (docs/client.md, "Retries"; the server's
 * side is docs/api.md, "Retries: `Idempotency-Key`"): which failures are
 * worth another attempt, how long to wait before it, and the key that makes
 * a retried write or read happen once.
 */

/** How a VaultClient retries a call whose answer was lost (docs/client.md, "Retries"). */
export interface RetryOptions {
  /** Attempts in all, the first included (1: no retry). A whole number of at least 1. */
  attempts: number;
  /** Milliseconds before the first retry (then doubled each time, with jitter), when the answer names no Retry-After. */
  baseDelayMs: number;
  /** Milliseconds one wait may last at most; a Retry-After longer than this ends the retries. */
  maxDelayMs: number;
}

/** The retries a VaultClient makes unless told otherwise: 4 attempts, 250 ms doubling up to 5 s. */
export const DEFAULT_RETRY: Readonly<RetryOptions> = Object.freeze({ attempts: 4, baseDelayMs: 250, maxDelayMs: 5_000 });

/**
 * Checks and completes a `retry` option of VaultClient: false (or
 * `attempts: 1`) turns retries off; a partial object takes the rest from
 * DEFAULT_RETRY.
 * @param option the caller's option; undefined: DEFAULT_RETRY.
 * @returns the whole policy (`attempts` 1 when off).
 * @throws RangeError for attempts that is not a whole number of at least 1, or a negative or NaN delay.
 */
export function retryPolicy(option: Partial<RetryOptions> | false | undefined): RetryOptions {
  if (option === false) return { ...DEFAULT_RETRY, attempts: 1 };
  const policy = { ...DEFAULT_RETRY, ...withoutUndefined(option ?? {}) };
  if (!Number.isInteger(policy.attempts) || policy.attempts < 1) throw new RangeError("retry.attempts must be a whole number of at least 1");
  if (!(policy.baseDelayMs >= 0)) throw new RangeError("retry.baseDelayMs must be 0 or a positive number of milliseconds");
  if (!(policy.maxDelayMs >= 0)) throw new RangeError("retry.maxDelayMs must be 0 or a positive number of milliseconds");
  return policy;
}

function withoutUndefined(option: Partial<RetryOptions>): Partial<RetryOptions> {
  const out: Partial<RetryOptions> = {};
  for (const name of ["attempts", "baseDelayMs", "maxDelayMs"] as const) {
    const value = option[name];
    if (value !== undefined) out[name] = value;
  }
  return out;
}

/**
 * What a call may be retried after:
 * - `keyed`: its route takes `Idempotency-Key` and the call sends one, so a
 *   503 or a cut connection is retried with the same key (the vault answers
 *   the first outcome again);
 * - `safe`: it changes nothing (GET or HEAD of anything but a secret's
 *   value, which is keyed), retried alike;
 * - `unsent`: a write the vault keeps no key for: retried only when the
 *   connection never opened, so nothing was sent.
 */
export type RetryClass = "keyed" | "safe" | "unsent";

/** Error codes (Node's and undici's) of a connection that never opened: nothing of the request was sent. */
const NEVER_CONNECTED = new Set(["ECONNREFUSED", "UND_ERR_CONNECT_TIMEOUT", "EHOSTUNREACH", "ENETUNREACH", "EAI_AGAIN"]);
/** Error codes of a connection lost with the request possibly sent: the vault may have acted on it. */
const CUT = new Set(["ECONNRESET", "EPIPE", "ECONNABORTED", "ETIMEDOUT", "UND_ERR_SOCKET", "UND_ERR_CLOSED"]);

/** The `code`s on an error, its `cause` chain and an AggregateError's `errors` (a fetch's TypeError "fetch failed" holds them). */
function codesOf(err: unknown, depth = 0, out: Set<string> = new Set()): Set<string> {
  if (depth > 6 || err === null || typeof err !== "object") return out;
  const e = err as { code?: unknown; cause?: unknown; errors?: unknown };
  if (typeof e.code === "string") out.add(e.code);
  codesOf(e.cause, depth + 1, out);
  if (Array.isArray(e.errors)) for (const inner of e.errors) codesOf(inner, depth + 1, out);
  return out;
}

/**
 * Whether a failed fetch (or a body cut while read) may be sent again:
 * `unsent` calls only when the connection never opened (ECONNREFUSED and
 * the like), `keyed` and `safe` calls also when it was reset or closed
 * mid-way (ECONNRESET, "socket hang up", undici's "other side closed").
 * An error without such a code (another fetch's own failure) is not retried.
 * @param err what fetch or the body read threw.
 * @param kind how the call may be retried (RetryClass).
 */
export function connectionRetryable(err: unknown, kind: RetryClass): boolean {
  const codes = codesOf(err);
  for (const code of codes) {
    if (NEVER_CONNECTED.has(code)) return true;
    if (kind !== "unsent" && CUT.has(code)) return true;
  }
  return false;
}

/**
 * Milliseconds to wait before attempt `next` (2 for the first retry):
 * Retry-After when the answer named one, else `baseDelayMs` doubled per
 * retry up to `maxDelayMs`, the upper half of it at random ("equal jitter",
 * so clients cut at once do not come back at once).
 * @param retryAfterSeconds the answer's Retry-After (seconds), or undefined.
 * @returns the wait in milliseconds, or undefined when a Retry-After is longer than `maxDelayMs` (stop retrying).
 */
export function retryDelay(policy: RetryOptions, next: number, retryAfterSeconds: number | undefined): number | undefined {
  if (retryAfterSeconds !== undefined) {
    const ms = retryAfterSeconds * 1000;
    return ms > policy.maxDelayMs ? undefined : ms;
  }
  const cap = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (next - 2));
  return cap / 2 + Math.random() * (cap / 2);
}

/**
 * A fresh Idempotency-Key: 128 random bits (crypto.getRandomValues) as 22
 * base64url characters, within the contract's 1 to 255 printable ASCII
 * characters (docs/api.md, "Retries").
 */
export function newIdempotencyKey(): string {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(16));
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/**
 * Waits `ms` milliseconds, or less when `signal` aborts (then resolves too:
 * the caller looks at the signal).
 */
export function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}
