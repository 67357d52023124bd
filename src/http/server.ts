import { createServer, STATUS_CODES } from "node:http";
import type { IncomingMessage, Server } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { Server as HttpsServer } from "node:https";
import type { Duplex } from "node:stream";
import type { SecureContextOptions } from "node:tls";
import { getRequestListener } from "@hono/node-server";
import { capConnectionsPerAddress, evictWaitingConnections } from "./connection-cap.js";
import { STATIC_HEADERS, TLS_HEADERS, VaultResponse, VaultTlsResponse } from "./response.js";
import type { CertificatePair, CertificateSource } from "./tls/source.js";
import type { Logger } from "../log/log.js";

/** The limits that keep idle and slow clients from exhausting the process. Times in milliseconds. */
export interface ConnectionLimits {
  /** Time to send complete request headers (server.headersTimeout). */
  headersTimeoutMs: number;
  /** Time to send a whole request (server.requestTimeout); at least headersTimeoutMs. */
  requestTimeoutMs: number;
  /** Idle keep-alive connections are closed after this (server.keepAliveTimeout). */
  keepAliveTimeoutMs: number;
  /** Open client connections at most (server.maxConnections); more are closed at once. */
  maxConnections: number;
  /**
   * Open connections of one client address at most (127.0.0.1 and ::1 not
   * capped: connection-cap.ts); more are closed at once. 0: no cap.
   */
  maxConnectionsPerIp: number;
}

/** Least time between two warnings about refused connections, milliseconds. */
const DROP_WARNING_EVERY_MS = 10_000;

/**
 * A JSON error response written straight to a socket, for requests that
 * never reach the app (the HTTP parser refused them): `Connection: close`.
 */
function rawJsonResponse(status: number, error: string, headers: readonly (readonly [string, string])[]): string {
  const body = JSON.stringify({ error });
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? "Error"}\r\n` +
    headers.map(([name, value]) => `${name}: ${value}\r\n`).join("") +
    "Content-Type: application/json\r\n" +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    "Connection: close\r\n\r\n" +
    body
  );
}

/** The status and message for an HTTP parser error (Node's clientError codes). */
function clientErrorAnswer(code: string | undefined): { status: number; error: string } {
  if (code === "HPE_HEADER_OVERFLOW") return { status: 431, error: "request headers too large" };
  if (code === "ERR_HTTP_REQUEST_TIMEOUT") return { status: 408, error: "request timed out" };
  return { status: 400, error: "malformed HTTP request" };
}

/** The vault's HTTP or HTTPS server: its responses are VaultResponse. */
export type VaultServer = Server<typeof IncomingMessage, typeof VaultResponse> | HttpsServer<typeof IncomingMessage, typeof VaultResponse>;

/**
 * The TLS options of the HTTPS listener for a pair: TLS 1.2 at least, Node's
 * defaults otherwise (ciphers, curves, session tickets), and ALPN `http/1.1`
 * only: the vault speaks HTTP/1.1, whose server enforces the timeouts and
 * connection caps below; Node's HTTP/2 server with its HTTP/1.1 fallback does
 * not (docs/deploy.md, "The executable alone, on HTTPS").
 */
export function tlsOptions(pair: CertificatePair): SecureContextOptions & { ALPNProtocols: string[] } {
  return { cert: pair.cert, key: pair.key, minVersion: "TLSv1.2", ALPNProtocols: ["http/1.1"] };
}

/**
 * Builds the vault's HTTP/1.1 server around the app's fetch handler (not
 * listening yet), so that every answer is JSON (docs/contract.md §14: bad
 * input gets `{"error": ...}`) and slow clients are bounded:
 *
 * - A request the Node adapter cannot turn into a URL (a backslash in the
 *   path, `*` as the request target, a malformed Host) gets 400
 *   `{"error": ...}` instead of the adapter's empty text/plain 400; an error
 *   escaping the app gets 500 `{"error": "internal error"}`.
 * - A request the HTTP parser refuses (bad syntax 400, headers too large
 *   431, headers or body not sent in time 408) gets a JSON body, then the
 *   connection is closed.
 * - hostname: the default Host of a request without one (HTTP/1.0).
 * - headersTimeout, requestTimeout and keepAliveTimeout as configured; the
 *   timeouts are checked every min(1000, headersTimeout / 2) ms so a
 *   dribbling client is cut close to its deadline (Node checks every 30 s by
 *   default). Connections of one client address beyond maxConnectionsPerIp
 *   (connection-cap.ts: 127.0.0.1 and ::1 are not capped) are closed at
 *   once. At maxConnections, the connection that has waited longest without
 *   complete request headers is closed to make room for a newcomer; with
 *   every slot busy the newcomer is closed, except from 127.0.0.1 and ::1,
 *   which keep LOCAL_RESERVE slots beyond the limit (connection-cap.ts
 *   evictWaitingConnections). A warning is logged at most every 10 s.
 * - tls: HTTPS (tlsOptions) with the source's current pair, swapped for new
 *   handshakes (server.setSecureContext) each time the source changes, open
 *   connections kept; every answer, the raw ones above included, carries
 *   Strict-Transport-Security (response.ts HSTS). A handshake not done
 *   within headersTimeout, or failed, is closed without an answer; the
 *   connection caps count a connection from its TCP accept.
 */
export function createHttpServer(
  fetch: (request: Request) => Response | Promise<Response>,
  limits: ConnectionLimits,
  log: Logger,
  hostname?: string,
  tls?: CertificateSource,
): VaultServer {
  const listener = getRequestListener(fetch, {
    hostname,
    errorHandler: (err: unknown) => {
      const adapterRefused = err instanceof Error && err.name === "RequestError";
      return adapterRefused
        ? Response.json({ error: `bad request: ${err.message}` }, { status: 400 })
        : Response.json({ error: "internal error" }, { status: 500 });
    },
  });
  const http = {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(limits.headersTimeoutMs / 2))),
  };
  const handle = (incoming: IncomingMessage, outgoing: VaultResponse) => void listener(incoming, outgoing);
  let server: VaultServer;
  if (tls === undefined) {
    // X-Request-Id and the security headers go out in the answer's one writeHead.
    server = createServer(Object.assign(http, { ServerResponse: VaultResponse }), handle);
  } else {
    // A handshake gets the time complete headers get: the request's clock starts only after it.
    const https = createHttpsServer(
      Object.assign(http, tlsOptions(tls.current()), { ServerResponse: VaultTlsResponse, handshakeTimeout: limits.headersTimeoutMs }),
      handle,
    );
    const off = tls.onChange(() => https.setSecureContext(tlsOptions(tls.current())));
    https.once("close", off);
    server = https;
  }
  const rawHeaders = tls === undefined ? STATIC_HEADERS : TLS_HEADERS;

  server.on("clientError", (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (err.code === "ECONNRESET" || !socket.writable) {
      socket.destroy();
      return;
    }
    const { status, error } = clientErrorAnswer(err.code);
    socket.end(rawJsonResponse(status, error, rawHeaders));
    // A client that never reads its answer does not keep the socket.
    setTimeout(() => socket.destroy(), 1000).unref();
  });

  let lastPerIpWarning = Number.NEGATIVE_INFINITY;
  capConnectionsPerAddress(server, limits.maxConnectionsPerIp, (address) => {
    const now = Date.now();
    if (now - lastPerIpWarning < DROP_WARNING_EVERY_MS) return;
    lastPerIpWarning = now;
    log.warn(
      { address, max_connections_per_ip: limits.maxConnectionsPerIp },
      "connection refused: VAULT_MAX_CONNECTIONS_PER_IP reached for this client address",
    );
  });

  let lastDropWarning = Number.NEGATIVE_INFINITY;
  const warnFull = (what: string) => {
    const now = Date.now();
    if (now - lastDropWarning < DROP_WARNING_EVERY_MS) return;
    lastDropWarning = now;
    log.warn({ max_connections: limits.maxConnections }, `${what}: VAULT_MAX_CONNECTIONS reached (a reverse proxy in front of the vault absorbs idle and slow clients)`);
  };
  // Under pressure the connection waiting longest for its headers makes room (connection-cap.ts).
  evictWaitingConnections(
    server,
    limits.maxConnections,
    () => warnFull("connection without complete headers closed to make room"),
    () => warnFull("connection refused"),
  );
  server.on("drop", () => warnFull("connection refused"));
  return server;
}
