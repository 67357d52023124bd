import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { STATIC_HEADERS } from "../response.js";
import type { ConnectionLimits } from "../server.js";

/** Where ACME HTTP-01 asks for its key authorization (RFC 8555 §8.3). */
export const ACME_CHALLENGE_PREFIX = "/.well-known/acme-challenge/";

/**
 * An HTTP-01 answerer: the key authorization for a challenge token, or
 * undefined when the token is not one being validated (RFC 8555 §8.3); a
 * promise when it is looked up in the database (another node's order). An
 * ACME client plugs one in; without one every challenge path is 404.
 */
export type ChallengeAnswerer = (token: string) => string | undefined | Promise<string | undefined>;

/** What the redirect listener needs. */
export interface RedirectOptions {
  /**
   * The HTTPS origin to send everyone to, e.g. `https://vault.example.com`
   * (VAULT_PUBLIC_URL when it is https://); undefined: the request's Host
   * without its port, on `tlsPort`.
   */
  origin?: string | undefined;
  /** The HTTPS listener's port, for the Host-header case (443 is left out of the URL). */
  tlsPort: number;
  /** The HTTP-01 answerer (see ChallengeAnswerer); default none. */
  challenge?: ChallengeAnswerer | undefined;
  /** The HTTP limits of the main listener, applied here too. */
  limits: Pick<ConnectionLimits, "headersTimeoutMs" | "requestTimeoutMs" | "keepAliveTimeoutMs" | "maxConnections">;
}

function answer(res: ServerResponse, status: number, headers: Record<string, string>, body: string): void {
  const all: Record<string, string | number> = { "Content-Length": Buffer.byteLength(body) };
  for (const [name, value] of STATIC_HEADERS) all[name] = value;
  res.writeHead(status, Object.assign(all, headers));
  res.end(body);
}

function jsonError(res: ServerResponse, status: number, error: string): void {
  answer(res, status, { "Content-Type": "application/json" }, JSON.stringify({ error }));
}

/**
 * The https URL for a request: `origin` + the request target, or
 * `https://{Host without its port}[:tlsPort]` + the target.
 * @returns undefined when the Host header is missing or not a host name.
 */
export function httpsLocation(req: Pick<IncomingMessage, "url" | "headers">, origin: string | undefined, tlsPort: number): string | undefined {
  const target = req.url ?? "/";
  if (origin !== undefined) return origin + target;
  const host = req.headers.host;
  if (host === undefined || host === "") return undefined;
  let hostname: string;
  try {
    hostname = new URL(`http://${host}`).hostname;
  } catch {
    return undefined;
  }
  return `https://${hostname}${tlsPort === 443 ? "" : `:${tlsPort}`}${target}`;
}

/**
 * The plain-HTTP listener of VAULT_HTTP_REDIRECT_PORT (docs/deploy.md,
 * "The executable alone, on HTTPS"), not listening yet: every request gets `308 Permanent Redirect`
 * (RFC 9110 §15.4.9: the method and body are kept) to the same path and
 * query on HTTPS, with a JSON body `{"location": ...}`, and nothing else is
 * served; a request target that is not a path (`*`, an absolute URL) or a
 * missing Host is 400. `GET /.well-known/acme-challenge/<token>` goes to the
 * ChallengeAnswerer (200 text/plain with its answer), 404 when there is
 * none or it does not know the token (503 when its lookup fails). No Strict-Transport-Security here:
 * RFC 6797 §7.2 forbids it over plain HTTP.
 */
export function createRedirectServer(options: RedirectOptions): Server {
  const server = createServer(
    {
      headersTimeout: options.limits.headersTimeoutMs,
      requestTimeout: options.limits.requestTimeoutMs,
      keepAliveTimeout: options.limits.keepAliveTimeoutMs,
    },
    (req, res) => {
      const target = req.url ?? "";
      if (!target.startsWith("/")) return jsonError(res, 400, "the request target must be a path");
      if (target.startsWith(ACME_CHALLENGE_PREFIX) && (req.method === "GET" || req.method === "HEAD")) {
        const token = target.slice(ACME_CHALLENGE_PREFIX.length);
        const known = options.challenge?.(token);
        if (!(known instanceof Promise)) {
          if (known === undefined) return jsonError(res, 404, "not found");
          return answer(res, 200, { "Content-Type": "text/plain" }, known);
        }
        known.then(
          (found) => (found === undefined ? jsonError(res, 404, "not found") : answer(res, 200, { "Content-Type": "text/plain" }, found)),
          () => jsonError(res, 503, "the challenge could not be looked up"),
        );
        return;
      }
      const location = httpsLocation(req, options.origin, options.tlsPort);
      if (location === undefined) return jsonError(res, 400, "a Host header is needed");
      // The body is not read: the client sends it again to the https URL.
      answer(res, 308, { Location: location, "Content-Type": "application/json", Connection: "close" }, JSON.stringify({ location }));
    },
  );
  server.maxConnections = options.limits.maxConnections;
  server.on("clientError", (_err, socket) => socket.destroy());
  return server;
}
