import { ServerResponse } from "node:http";
import type { IncomingMessage, OutgoingHttpHeaders } from "node:http";

/** Headers every answer carries (docs/contract.md §14: nothing a cache or a browser may keep or sniff). */
export const STATIC_HEADERS: readonly (readonly [string, string])[] = [
  ["Cache-Control", "no-store"],
  ["X-Content-Type-Options", "nosniff"],
];

/** Lower-case names of the headers VaultResponse adds: a response that sets one itself keeps its own. */
const OWN_HEADERS = new Set(["x-request-id", ...STATIC_HEADERS.map(([name]) => name.toLowerCase())]);

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
      for (const [name, value] of STATIC_HEADERS) merged[name] = value;
      const given = last as OutgoingHttpHeaders;
      for (const name in given) merged[name] = given[name];
      rest[rest.length - 1] = merged;
    } else if (!this.headersSent) {
      // setHeader first: writeHead then merges the answer's own headers over ours.
      if (this.requestId !== undefined && !this.hasHeader("x-request-id")) this.setHeader("X-Request-Id", this.requestId);
      for (const [name, value] of STATIC_HEADERS) if (!this.hasHeader(name)) this.setHeader(name, value);
    }
    return super.writeHead(statusCode, ...(rest as [OutgoingHttpHeaders]));
  }
}

/** True when `headers` names one of the vault's own headers itself (any case). */
function clashes(headers: OutgoingHttpHeaders): boolean {
  for (const name in headers) {
    if (name.length >= 12 && name.length <= 22 && OWN_HEADERS.has(name.toLowerCase())) return true;
  }
  return false;
}
