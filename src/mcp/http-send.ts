import { request as httpRequest } from "node:http";
import type { IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { rootCertificates } from "node:tls";
import type { Readable } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import type { Masker } from "../inject/mask.js";
import { AddressRefusedError, guardedLookup, ipLiteralOf, isPublicAddress } from "../webhooks/address-guard.js";
import type { Lookup } from "../webhooks/address-guard.js";

/** One hop of http_request: what goes on the wire. */
export interface HopRequest {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body: Buffer | undefined;
  /** Lift the address guard for this hop (an exact `--allow-host` naming a private address: http-allow.ts privateAllowed). */
  allowPrivate: boolean;
  lookup: Lookup;
  /** An extra trusted CA (PEM), for in-process tests; a deployment uses NODE_EXTRA_CA_CERTS. */
  ca?: string | undefined;
  /** Aborted at the call's deadline (--request-timeout). */
  signal: AbortSignal;
}

/** A hop's answer, before its body is read. */
export interface HopResponse {
  status: number;
  /** Header name (lower case) -> value, repeated headers joined with ", ". Not masked yet. */
  headers: Record<string, string>;
  response: IncomingMessage;
}

/** A hop that failed before an answer: `reason` is short and holds no payload (an error code, never a header or body). */
export class HopError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = "HopError";
  }
}

/**
 * Sends one request (docs/mcp.md, "http_request"): certificates always
 * verified (default CAs plus NODE_EXTRA_CA_CERTS, or `ca`); the webhooks'
 * address guard (webhooks/address-guard.ts) unless `allowPrivate`: an IP
 * literal is checked here, a name through guardedLookup at connection
 * time, so the address connected to is the address checked (no DNS
 * rebinding window). Redirects are not followed here (the caller does).
 * @returns the status and headers once they arrive; the body is left in `response`.
 * @throws HopError for a refused address, a connection or TLS failure, or the deadline (reason "timeout").
 */
export function sendHop(hop: HopRequest): Promise<HopResponse> {
  return new Promise<HopResponse>((resolve, reject) => {
    const literal = ipLiteralOf(hop.url.hostname);
    if (literal !== undefined && !hop.allowPrivate && !isPublicAddress(literal)) {
      reject(new HopError(describeError(new AddressRefusedError())));
      return;
    }
    const https = hop.url.protocol === "https:";
    const headers = { ...hop.headers, ...(hop.body === undefined ? {} : { "content-length": String(hop.body.length) }) };
    const options = {
      method: hop.method,
      headers,
      agent: false as const,
      lookup: guardedLookup(hop.allowPrivate, hop.lookup),
      signal: hop.signal,
      ...(https ? { rejectUnauthorized: true, ...(hop.ca === undefined ? {} : { ca: [...rootCertificates, hop.ca] }) } : {}),
    };
    const onResponse = (response: IncomingMessage) => {
      const flat: Record<string, string> = {};
      for (const [name, value] of Object.entries(response.headers)) {
        if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(", ") : value;
      }
      resolve({ status: response.statusCode ?? 0, headers: flat, response });
    };
    const outgoing = https ? httpsRequest(hop.url, options, onResponse) : httpRequest(hop.url, options, onResponse);
    outgoing.on("error", (err: NodeJS.ErrnoException) => reject(new HopError(hop.signal.aborted ? "timeout" : describeError(err))));
    outgoing.end(hop.body);
  });
}

/**
 * The address guard before anything is read (docs/mcp.md, "http_request"):
 * the URL's host must be, or resolve (through `lookup`) only to, public
 * addresses (webhooks/address-guard.ts isPublicAddress), unless
 * `allowPrivate`; `localhost` names are refused without a lookup. The
 * connection checks again (sendHop), pinned to what it resolves then.
 * @param timeoutMs how long the lookup may take (the call's --request-timeout), milliseconds.
 * @returns why the host is refused (it does not resolve in time, or a non-public address), or undefined.
 */
export async function precheckAddress(url: URL, allowPrivate: boolean, lookup: Lookup, timeoutMs: number): Promise<string | undefined> {
  if (allowPrivate) return undefined;
  const refused = describeError(new AddressRefusedError());
  const literal = ipLiteralOf(url.hostname);
  if (literal !== undefined) return isPublicAddress(literal) ? undefined : refused;
  const name = url.hostname.toLowerCase().replace(/\.$/, "");
  if (name === "localhost" || name.endsWith(".localhost")) return refused;
  let addresses: string[];
  let timer: NodeJS.Timeout | undefined;
  try {
    addresses = await Promise.race([
      lookup(url.hostname),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error("timeout")), timeoutMs);
      }),
    ]);
  } catch {
    return `${url.hostname} does not resolve`;
  } finally {
    clearTimeout(timer);
  }
  if (addresses.length === 0) return `${url.hostname} does not resolve`;
  return addresses.every(isPublicAddress) ? undefined : refused;
}

/**
 * Reads a response body through `masker` (every injected value and its
 * encodings become `<masked:KEY>`: inject/mask.ts), after undoing a gzip,
 * deflate or br content-encoding (so a compressed echo is masked too),
 * keeping the first `maxBytes` masked bytes and counting the rest.
 * @returns the kept text (UTF-8, a cut character dropped) and the masked bytes dropped.
 * @throws HopError "timeout" at the deadline, or for a body that breaks off or does not decompress.
 */
export function readMasked(response: IncomingMessage, masker: Masker, maxBytes: number, signal: AbortSignal): Promise<{ body: string; dropped: number }> {
  return new Promise((resolve, reject) => {
    const encoding = (response.headers["content-encoding"] ?? "").trim().toLowerCase();
    let source: Readable = response;
    if (encoding === "gzip" || encoding === "x-gzip") source = response.pipe(createGunzip());
    else if (encoding === "deflate") source = response.pipe(createInflate());
    else if (encoding === "br") source = response.pipe(createBrotliDecompress());
    const masked = source.pipe(masker.stream());
    const kept: Buffer[] = [];
    let size = 0;
    let dropped = 0;
    let settled = false;
    const fail = (reason: string) => {
      if (settled) return;
      settled = true;
      response.destroy();
      reject(new HopError(reason));
    };
    masked.on("data", (chunk: Buffer) => {
      const room = maxBytes - size;
      if (room > 0) {
        kept.push(chunk.subarray(0, room));
        size += Math.min(room, chunk.length);
      }
      dropped += Math.max(0, chunk.length - Math.max(room, 0));
    });
    masked.on("end", () => {
      if (settled) return;
      settled = true;
      // A cut in the middle of a character: drop its leading bytes rather than return a broken one.
      const bytes = Buffer.concat(kept);
      const text = new TextDecoder("utf-8", { fatal: false }).decode(trimPartialChar(bytes, dropped > 0));
      resolve({ body: text, dropped });
    });
    const onError = () => fail(signal.aborted ? "timeout" : "the answer broke off or does not decode");
    response.on("error", onError);
    source.on("error", onError);
    response.on("aborted", onError);
    if (signal.aborted) fail("timeout");
    else signal.addEventListener("abort", () => fail("timeout"), { once: true });
  });
}

/** `bytes` without a UTF-8 character cut at its end (only when it was cut). */
function trimPartialChar(bytes: Buffer, cut: boolean): Buffer {
  if (!cut) return bytes;
  let back = 0;
  while (back < 4 && back < bytes.length && ((bytes[bytes.length - 1 - back] as number) & 0xc0) === 0x80) back++;
  const lead = bytes[bytes.length - 1 - back];
  if (lead === undefined || lead < 0xc0) return bytes;
  const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
  return back + 1 < need ? bytes.subarray(0, bytes.length - 1 - back) : bytes;
}

/** A short, safe reason for a failed connection: the error code, never a payload. */
function describeError(err: NodeJS.ErrnoException): string {
  if (err instanceof AddressRefusedError) return "address not allowed: a loopback, private, link-local or otherwise non-public address (allow it with an exact --allow-host)";
  const code = typeof err.code === "string" ? err.code : undefined;
  if (code === undefined) return "request failed";
  if (/CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO|ALTNAME/.test(code)) return `TLS error (${code})`;
  return `connection failed (${code})`;
}
