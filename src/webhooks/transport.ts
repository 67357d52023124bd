import { Agent, request } from "node:https";
import { rootCertificates } from "node:tls";
import { AddressRefusedError, guardedLookup, ipLiteralOf, isPublicAddress, systemLookup } from "./address-guard.js";
import type { Lookup } from "./address-guard.js";

/** One POST of a delivery: the URL, the exact body bytes, and the headers. */
export interface DeliveryRequest {
  url: string;
  body: string;
  headers: Record<string, string>;
}

/**
 * What one attempt came to (docs/contract.md §10): success is a status in
 * 200-299; anything else (another status, a network or TLS error, the
 * timeout, a refused address) is a failure. `error` is a short reason that
 * never holds the body or a header value. `timedOut` is true when no
 * complete answer came within the timeout (the worker counts it against the
 * webhook's scope: webhooks/shares.ts).
 */
export type DeliveryResult =
  | { ok: true; httpStatus: number }
  | { ok: false; httpStatus: number | null; error: string; timedOut?: boolean | undefined };

/** Sends deliveries. The worker owns one; close() releases its sockets. */
export interface Transport {
  /**
   * Posts one delivery. Never rejects: every failure is a result.
   * @param signal aborting it (graceful stop) ends the attempt with error "aborted".
   */
  send(req: DeliveryRequest, signal?: AbortSignal): Promise<DeliveryResult>;
  close(): void;
}

export interface HttpsTransportOptions {
  /** One attempt's limit, connection to end of response, milliseconds (VAULT_WEBHOOK_TIMEOUT_MS). */
  timeoutMs: number;
  /** VAULT_WEBHOOK_ALLOW_PRIVATE: lift the address guard. */
  allowPrivate: boolean;
  /** Name resolution, default the system resolver. */
  lookup?: Lookup | undefined;
  /**
   * An extra trusted CA certificate (PEM), added to Node's default list. For
   * in-process tests only: a deployment uses NODE_EXTRA_CA_CERTS, which Node
   * reads at start and applies when this is unset (docs/contract.md §10).
   */
  ca?: string | undefined;
}

/** Response bytes read (and thrown away) before the connection is cut. */
const MAX_RESPONSE_BYTES = 64 * 1024;

/**
 * The HTTPS transport of webhook deliveries:
 * - certificates always verified (default CAs plus NODE_EXTRA_CA_CERTS, or `ca`);
 * - the address guard applied at connection time: IP literals checked here,
 *   names through guardedLookup, so DNS rebinding cannot reach a private
 *   address;
 * - redirects are not followed (a 3xx is a failure);
 * - the whole attempt bounded by `timeoutMs`;
 * - the response body is drained up to 64 KiB and ignored.
 */
export function createHttpsTransport(options: HttpsTransportOptions): Transport {
  const lookup = guardedLookup(options.allowPrivate, options.lookup ?? systemLookup);
  const agent = new Agent({
    keepAlive: true,
    maxSockets: 16,
    ...(options.ca !== undefined ? { ca: [...rootCertificates, options.ca] } : {}),
  });

  const send = (req: DeliveryRequest, signal?: AbortSignal): Promise<DeliveryResult> =>
    new Promise<DeliveryResult>((resolve) => {
      let url: URL;
      try {
        url = new URL(req.url);
      } catch {
        resolve({ ok: false, httpStatus: null, error: "invalid url" });
        return;
      }
      if (url.protocol !== "https:") {
        resolve({ ok: false, httpStatus: null, error: "url is not https" });
        return;
      }
      const literal = ipLiteralOf(url.hostname);
      if (literal !== undefined && !options.allowPrivate && !isPublicAddress(literal)) {
        resolve({ ok: false, httpStatus: null, error: new AddressRefusedError().message });
        return;
      }
      if (signal?.aborted) {
        resolve({ ok: false, httpStatus: null, error: "aborted" });
        return;
      }

      let settled = false;
      const finish = (result: DeliveryResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        resolve(result);
      };
      const body = Buffer.from(req.body, "utf8");
      const outgoing = request(
        url,
        {
          method: "POST",
          agent,
          lookup,
          headers: Object.assign({}, req.headers, { "Content-Length": String(body.length) }),
          rejectUnauthorized: true,
        },
        (res) => {
          const status = res.statusCode ?? 0;
          let seen = 0;
          const done = () => {
            if (status >= 200 && status <= 299) finish({ ok: true, httpStatus: status });
            else if (status >= 300 && status <= 399) finish({ ok: false, httpStatus: status, error: `HTTP ${status} (redirects are not followed)` });
            else finish({ ok: false, httpStatus: status, error: `HTTP ${status}` });
          };
          res.on("data", (chunk: Buffer) => {
            seen += chunk.length;
            if (seen > MAX_RESPONSE_BYTES) {
              res.destroy();
              done();
            }
          });
          res.on("end", done);
          res.on("close", done);
          res.on("error", done);
        },
      );
      const onAbort = () => {
        outgoing.destroy();
        finish({ ok: false, httpStatus: null, error: "aborted" });
      };
      const timer = setTimeout(() => {
        outgoing.destroy();
        finish({ ok: false, httpStatus: null, error: `timeout after ${options.timeoutMs} ms`, timedOut: true });
      }, options.timeoutMs);
      signal?.addEventListener("abort", onAbort, { once: true });
      outgoing.on("error", (err: NodeJS.ErrnoException) => finish({ ok: false, httpStatus: null, error: describeError(err) }));
      outgoing.end(body);
    });

  return { send, close: () => agent.destroy() };
}

/** A short, safe reason for a failed connection: the error code, never a payload. */
function describeError(err: NodeJS.ErrnoException): string {
  if (err instanceof AddressRefusedError) return err.message;
  const code = typeof err.code === "string" ? err.code : undefined;
  if (code === undefined) return "request failed";
  if (/CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO|ALTNAME/.test(code)) return `TLS error (${code})`;
  return `connection failed (${code})`;
}
