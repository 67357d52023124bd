import { ServerResponse } from "node:http";
import type { IncomingMessage, OutgoingHttpHeaders } from "node:http";

/** Headers every answer carries (docs/contract.md §14: nothing a cache or a browser may keep or sniff). */
export const STATIC_HEADERS: readonly (readonly [string, string])[] = [
  ["Cache-Control", "no-store"],
  ["X-Content-Type-Options", "nosniff"],
];

/**
 * Strict-Transport-Security of every answer over HTTPS (RFC 6797 §6.1): two
 * years, the value browsers' preload lists ask for; no includeSubDomains (the
 * vault does not speak for other hosts) (docs/deploy.md, "The executable alone, on HTTPS").
 */
export const HSTS: readonly [string, string] = ["Strict-Transport-Security", "max-age=63072000"];

/** The headers of every answer over HTTPS: STATIC_HEADERS and HSTS. */
export const TLS_HEADERS: readonly (readonly [string, string])[] = [...STATIC_HEADERS, HSTS];

/** Lower-case names of the headers VaultResponse adds: a response that sets one itself keeps its own. */
const OWN_HEADERS = new Set(["x-request-id", ...TLS_HEADERS.map(([name]) => name.toLowerCase())]);

/**
 * The vault server's Node response (http.createServer's ServerResponse
 * option): it adds X-Request-Id (the front middleware's `requestId`) and
 * STATIC_HEADERS to every answer as the status line is written, so the
 * headers are validated and stored once, in writeHead, instead of once per
 * setHeader call and again when the adapter's header object is merged.
 *
 * A header of the same name set by the answer itself (any case) wins, as it
 * did when these were set first with setHeader. Answers written without a
 * header object (`res.end()`, a raw array) get them through setHeader.
 */
export class VaultResponse extends ServerResponse<IncomingMessage> {
  /** The request's id (front.ts), sent as X-Request-Id; undefined: none. */
  requestId: string | undefined = undefined;

  /** The headers added to every answer (STATIC_HEADERS; VaultTlsResponse adds HSTS). */
  protected get vaultHeaders(): readonly (readonly [string, string])[] {
    return STATIC_HEADERS;
  }

  /**
   * ServerResponse.writeHead(status, [reason], [headers]) with the vault's
   * headers added (see the class).
   * @throws whatever ServerResponse.writeHead throws (an invalid header, headers already sent).
   */
  override writeHead(statusCode: number, ...rest: unknown[]): this {
    const last = rest.length > 0 ? rest[rest.length - 1] : undefined;
    if (last !== null && typeof last === "object" && !Array.isArray(last) && !clashes(last as OutgoingHttpHeaders)) {
      // The usual answer: one fresh object, ours first (the order they were always sent in).
      const merged: OutgoingHttpHeaders = {};
      if (this.requestId !== undefined) merged["X-Request-Id"] = this.requestId;
      for (const [name, value] of this.vaultHeaders) merged[name] = value;
      const given = last as OutgoingHttpHeaders;
      for (const name in given) merged[name] = given[name];
      rest[rest.length - 1] = merged;
    } else if (!this.headersSent) {
      // setHeader first: writeHead then merges the answer's own headers over ours.
      if (this.requestId !== undefined && !this.hasHeader("x-request-id")) this.setHeader("X-Request-Id", this.requestId);
      for (const [name, value] of this.vaultHeaders) if (!this.hasHeader(name)) this.setHeader(name, value);
    }
    return super.writeHead(statusCode, ...(rest as [OutgoingHttpHeaders]));
  }
}

/** The HTTPS listener's response (http/server.ts with TLS): VaultResponse with Strict-Transport-Security (HSTS) on every answer. */
export class VaultTlsResponse extends VaultResponse {
  protected override get vaultHeaders(): readonly (readonly [string, string])[] {
    return TLS_HEADERS;
  }
}

/** True when `headers` names one of the vault's own headers itself (any case). */
function clashes(headers: OutgoingHttpHeaders): boolean {
  for (const name in headers) {
    // 12 to 25: the lengths of the names in OWN_HEADERS, a cheap test before the lower-casing.
    if (name.length >= 12 && name.length <= 25 && OWN_HEADERS.has(name.toLowerCase())) return true;
  }
  return false;
}
