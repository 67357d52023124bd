import { EnvelopeError } from "./envelope.js";
import { AnswerTimeoutError, VaultApiError } from "./errors.js";
import { seg } from "./http.js";
import type { Transport } from "./http.js";
import { generateRequestKeys, openAnswer, requestRevealProof } from "./request-envelope.js";
import type { AnswerRead, AwaitAnswerOptions, MadeRequest, PageOptions, RequestOptions, RequestPage, ResponseOf, SecretRequest } from "./types.js";

/**
 * Requests, "ask someone for a secret" (docs/requests.md): the asker's side.
 * The key pair is made here (request-envelope.ts generateRequestKeys) and the
 * private key never leaves the caller: the vault gets the public key and the
 * reveal check only, and the answer is opened here (openAnswer).
 */

/** The default pause between two polls of awaitAnswer(), milliseconds. */
export const DEFAULT_POLL_INTERVAL_MS = 2_000;

/** `/requests`, or `/orgs/{org}/requests` for an org. */
export function requestsPath(org: string | undefined): string {
  return org === undefined ? "/requests" : `/orgs/${seg(org)}/requests`;
}

/** The private link of a request: its answer link, `/open`, and the private key as the fragment (a browser never sends it). */
export function privateUrlOf(url: string, privateKey: string): string {
  return `${url}/open#${privateKey}`;
}

/**
 * Makes a request (POST /requests, or /orgs/{org}/requests): a fresh key
 * pair here, the public key and reveal check sent (docs/requests.md).
 * @param t the transport (token: a scoped key with `write`, a principal key with `c`, or the master key).
 * @param org the org, or undefined for a global request.
 * @param options description (1-1000 characters), ttlSeconds (seconds; the vault's default 7 days, at most 30), maxReads (default 1).
 * @returns the request's id and url, the private key and the private link, its expiry (Unix seconds) and the whole Request JSON.
 * @throws VaultApiError as the route (400 bad input, 402, 403).
 */
export async function makeRequest(t: Transport, org: string | undefined, options: RequestOptions): Promise<MadeRequest> {
  const keys = await generateRequestKeys();
  const { revealCheck } = await requestRevealProof(keys.privateKey);
  const body: Record<string, unknown> = { description: options.description, public_key: keys.publicKey, reveal_check: revealCheck };
  if (options.ttlSeconds !== undefined) body.ttl_seconds = options.ttlSeconds;
  if (options.maxReads !== undefined) body.max_reads = options.maxReads;
  const request = await t.json<SecretRequest>({ method: "POST", path: requestsPath(org), body });
  if (typeof request.id !== "string" || typeof request.url !== "string") {
    throw new VaultApiError(500, "unexpected response: no id and url", undefined, `POST ${requestsPath(org)}`);
  }
  return {
    id: request.id,
    url: request.url,
    privateKey: keys.privateKey,
    privateUrl: privateUrlOf(request.url, keys.privateKey),
    expiresAt: request.expires_at,
    request,
  };
}

/** Waits `ms` milliseconds, or rejects with the signal's reason when it aborts first. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    signal?.throwIfAborted();
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** The body of POST /r/{id}/reveal: one read of the answer (`value` the answer envelope). */
type RevealBody = ResponseOf<"/r/{id}/reveal", "post">;

/**
 * One read of a request's answer if it has one: POST /r/{id}/reveal with the
 * proof (docs/requests.md), no token (the proof is the capability).
 * @returns the answer read and opened, or undefined when nobody answered yet (409: nothing counted).
 * @throws VaultApiError 404 when the request is unknown, expired or its answer
 *   gone, 429 over the limiter; EnvelopeError "key" (readSpent false) when the
 *   vault refused the proof (403: not this request's private key), "key" or
 *   "format" when the answer does not open.
 */
export async function readAnswerOnce(anonymous: Transport, id: string, privateKey: string, proof: string): Promise<AnswerRead | undefined> {
  let body: RevealBody;
  try {
    body = await anonymous.json<RevealBody>({ method: "POST", path: `/r/${seg(id)}/reveal`, body: { proof }, anonymous: true, label: "POST /r/<id>/reveal" });
  } catch (err) {
    if (err instanceof VaultApiError && err.status === 409) return undefined;
    if (err instanceof VaultApiError && err.status === 403) {
      throw new EnvelopeError("key", "this private key is not the request's (the vault refused its proof); nothing was read", { readSpent: false });
    }
    throw err;
  }
  const value = await openAnswer(privateKey, id, body.value);
  const spent = body.max_reads !== null && body.read_count >= body.max_reads;
  return { value, answerId: body.id, readCount: body.read_count, maxReads: body.max_reads, expiresAt: body.expires_at, spent };
}

/**
 * Polls a request until it is answered, then reads the answer once and opens
 * it (docs/requests.md, "From the command line, the client and MCP"): POST
 * /r/{id}/reveal with the proof, whose 409 means not yet (nothing counted), every
 * `intervalMs` (default 2 s; a 429 waits its Retry-After instead, when longer).
 * @param options timeoutMs (milliseconds; 0 or omitted: wait until answered or gone), intervalMs, signal.
 * @returns the value byte-exact, and the read's facts (spent: that was the answer's last read).
 * @throws AnswerTimeoutError when `timeoutMs` runs out (nothing was read);
 *   the signal's reason on abort; VaultApiError 404 when the request is gone;
 *   EnvelopeError as readAnswerOnce (a malformed or wrong private key spends nothing).
 */
export async function awaitAnswer(anonymous: Transport, id: string, privateKey: string, options: AwaitAnswerOptions = {}): Promise<AnswerRead> {
  const { proof } = await requestRevealProof(privateKey);
  const timeoutMs = options.timeoutMs ?? 0;
  if (!(timeoutMs >= 0)) throw new RangeError("timeoutMs must be 0 (no limit) or a positive number of milliseconds");
  const interval = options.intervalMs ?? DEFAULT_POLL_INTERVAL_MS;
  if (!(interval > 0)) throw new RangeError("intervalMs must be a positive number of milliseconds");
  const deadline = timeoutMs > 0 ? Date.now() + timeoutMs : Number.POSITIVE_INFINITY;
  for (;;) {
    options.signal?.throwIfAborted();
    let wait = interval;
    try {
      const read = await readAnswerOnce(anonymous, id, privateKey, proof);
      if (read !== undefined) return read;
    } catch (err) {
      if (!(err instanceof VaultApiError && err.status === 429)) throw err;
      wait = Math.max(interval, (err.retryAfter ?? 0) * 1000);
    }
    const left = deadline - Date.now();
    if (left <= 0) throw new AnswerTimeoutError(id, timeoutMs);
    await pause(Math.min(wait, left), options.signal);
  }
}

/** Requests made with this client's token: list, get, delete (GET/DELETE /requests, or /orgs/{org}/requests). */
export class RequestsApi {
  constructor(
    private readonly t: Transport,
    private readonly org: string | undefined,
  ) {}

  /** GET: a page of requests (a scoped key sees those it made; the master key all); `{requests, next_cursor?}`. */
  list(page: PageOptions = {}): Promise<RequestPage> {
    return this.t.json({ method: "GET", path: requestsPath(this.org), query: { ...page } });
  }

  /** GET /{id}: one request (state `open` or `answered`, times in Unix seconds). @throws VaultApiError 404 when unknown, expired or deleted. */
  get(id: string): Promise<SecretRequest> {
    return this.t.json({ method: "GET", path: `${requestsPath(this.org)}/${seg(id)}` });
  }

  /** DELETE /{id}: the request and its answer, at once; `{deleted: true}`. @throws VaultApiError 404 when unknown. */
  delete(id: string): Promise<{ deleted: boolean }> {
    return this.t.json({ method: "DELETE", path: `${requestsPath(this.org)}/${seg(id)}` });
  }
}
