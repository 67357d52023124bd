import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import * as z from "zod";
import { encodeKey } from "@ephemeral-vault/client";
import { Masker, MIN_MASKED_LENGTH } from "../inject/mask.js";
import { readSecrets } from "../inject/run-core.js";
import type { SecretRef } from "../inject/run-core.js";
import { systemLookup } from "../webhooks/address-guard.js";
import { httpAllowed, keyAllowed, privateAllowed, rulesFor } from "./http-allow.js";
import type { HostRule, HttpToolOptions } from "./http-allow.js";
import { hasReference, jsonReferencedKeys, referencedKeys, substitute, substituteJson } from "./http-refs.js";
import type { JsonBody } from "./http-refs.js";
import { HopError, precheckAddress, readMasked, sendHop } from "./http-send.js";
import type { McpOptions } from "./options.js";
import { failure, guarded, result } from "./tool-kit.js";

/** Redirects followed by hand, at most. */
export const MAX_REDIRECTS = 5;
/** The methods an agent may send. */
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);
/**
 * Headers the agent may not set: the framing the server writes itself, and
 * `Host`, which would send the request (and its secrets) to another site
 * behind the same address (a CDN routes by it).
 */
const FORBIDDEN_HEADERS = new Set([
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "upgrade",
  "te",
  "trailer",
  "expect",
  "proxy-connection",
  "proxy-authorization",
  "accept-encoding",
]);
/** A header name (an HTTP token). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** What a header value may hold (Node refuses anything else: CR, LF, NUL, characters above U+00FF). */
const HEADER_VALUE = /^[\t\u0020-\u007e\u0080-\u00ff]*$/;

const jsonBody: z.ZodType<JsonBody> = z.lazy(() => z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(jsonBody), z.record(z.string(), jsonBody)]));

/** The answer before masking. */
interface Exchange {
  status: number;
  headers: Record<string, string>;
  body: string;
  dropped: number;
}

/**
 * http_request (docs/mcp.md, "http_request"): sends an HTTP request to a
 * URL an `--allow-host` entry covers, with `{{vault:KEY}}` references in
 * header values, query values and body strings replaced by the secrets'
 * values, so the agent calls an API with credentials it never sees. Before
 * anything is read: the method, the URL (https unless `--allow-http`, no
 * reference in it), the host against the allow list and every key against
 * the host's `=PREFIX`; then every secret's HEAD (a missing one: nothing
 * read), then one read each (audited by the vault). Redirects are followed
 * by hand, at most MAX_REDIRECTS, each target checked against the allow
 * list and the injected keys; every hop through the webhooks' address guard
 * (pinned to the address resolved) unless an exact entry names a private
 * address or `localhost`. The answer's headers and body come back with
 * every value masked (inject/mask.ts), the body cut at `--output-limit`
 * bytes; stderr gets one line per call (method, host, path, status, keys;
 * never a value). A value shorter than MIN_MASKED_LENGTH is not sent (its read has counted).
 */
export function registerHttpRequest(server: McpServer, options: McpOptions, http: HttpToolOptions): void {
  const { client } = options;
  const bindings = http.hosts.map((rule) => `${rule.text.split("=")[0]} ${rule.keyPrefix === undefined ? "(any key that no other entry binds)" : `(keys starting with ${rule.keyPrefix})`}`).join("; ");
  server.registerTool(
    "http_request",
    {
      title: "Call an HTTP API with secrets it never shows you",
      description: `Send an HTTP request in which {{vault:KEY}} (or {{vault:KEY|base64}}) in a header value, a query value or a body string is replaced by that secret's value, e.g. headers {"Authorization": "Bearer {{vault:prod/api_token}}"}. You never see the value: the answer's headers and body come back with it (and its base64, URL- and JSON-escaped forms) replaced by <masked:KEY>. Each call reads each referenced secret once (the read counts). Only these URLs, and only these keys for each: ${bindings}. References are refused in the url itself (use query). HTTPS only${http.allowHttp.size > 0 ? ` (http for ${[...http.allowHttp].join(", ")})` : ""}; redirects are followed within the list, at most ${MAX_REDIRECTS}; the call gives up after ${Math.round(http.timeoutMs / 1000)} s; the body is cut after ${options.maxOutputBytes} bytes.`,
      inputSchema: {
        method: z.string().describe("GET, HEAD, POST, PUT, PATCH, DELETE or OPTIONS."),
        url: z.string().describe("An absolute https:// URL that the operator's --allow-host list covers, without secret references."),
        headers: z.record(z.string(), z.string()).optional().describe('Request headers; values may hold {{vault:KEY}}. Host, Content-Length, Accept-Encoding and hop-by-hop headers are set by the server.'),
        query: z.record(z.string(), z.string()).optional().describe("Query parameters added to the url (URL-encoded); values may hold {{vault:KEY}}."),
        body: z
          .union([z.string(), z.array(jsonBody), z.record(z.string(), jsonBody)])
          .optional()
          .describe("The body: a string sent as is, or a JSON object/array (sent as JSON, Content-Type application/json unless given) whose string values may hold {{vault:KEY}}."),
      },
      outputSchema: {
        status: z.number(),
        headers: z.record(z.string(), z.string()),
        body: z.string(),
        truncated_bytes: z.number().describe("Bytes of the (masked) body left out after the output limit."),
        injected: z.array(z.string()).describe("The secret keys whose values were sent (and are masked)."),
      },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    },
    async (input) => {
      // The agent's method goes into the log only when it is one of METHODS (no line break or other text from it).
      let log = { method: METHODS.has(input.method.toUpperCase()) ? input.method.toUpperCase() : "?", host: "?", path: "?", keys: [] as string[] };
      let masker: Masker | undefined;
      const report = (outcome: string) => {
        const line = `ephemeral-vault mcp: http_request ${log.method} ${log.host} ${log.path} -> ${outcome}; keys: ${log.keys.join(", ") || "none"}\n`;
        process.stderr.write(masker === undefined ? line : masker.maskText(line));
      };
      const answer = await guarded(async () => {
        const method = input.method.toUpperCase();
        if (!METHODS.has(method)) return failure(`method not allowed: ${method.slice(0, 16)}; use one of ${[...METHODS].join(", ")}`);
        if (hasReference(input.url)) return failure("a secret reference may not stand in the url (its host or path): put it in query, headers or body");
        let url: URL;
        try {
          url = new URL(input.url);
        } catch {
          return failure("url must be an absolute https:// URL");
        }
        url.hash = "";
        log = { ...log, host: url.host, path: url.pathname };
        const refused = refuseUrl(url, http);
        if (refused !== undefined) return failure(refused);
        const matching = rulesFor(http.hosts, url);

        // Every reference, and every check, before anything is read.
        const headerEntries = Object.entries(input.headers ?? {});
        for (const [name] of headerEntries) {
          if (!TOKEN.test(name)) return failure("a header name must be an HTTP token (letters, digits and !#$%&'*+-.^_`|~)");
          if (FORBIDDEN_HEADERS.has(name.toLowerCase())) return failure(`the header ${name} is set by the server and may not be given`);
        }
        const queryEntries = Object.entries(input.query ?? {});
        if (queryEntries.some(([name]) => hasReference(name))) return failure("a secret reference may stand in a query value, not in its name");
        const keys: string[] = [];
        const add = (found: string[]) => {
          for (const k of found) if (!keys.includes(k)) keys.push(k);
        };
        for (const [, value] of headerEntries) add(referencedKeys(value));
        for (const [, value] of queryEntries) add(referencedKeys(value));
        if (typeof input.body === "string") add(referencedKeys(input.body));
        else if (input.body !== undefined) add(jsonReferencedKeys(input.body));
        for (const k of keys) encodeKey(k);
        log = { ...log, keys };
        const unbound = keys.find((k) => !keyAllowed(http.hosts, matching, k));
        if (unbound !== undefined) return failure(`not sent: ${unbound} may not be sent to ${url.host} (${describeBinding(matching)})`);

        const address = await precheckAddress(url, privateAllowed(matching, url), http.lookup ?? systemLookup, http.timeoutMs);
        if (address !== undefined) return failure(`not sent: ${url.host}: ${address}`);

        const refs = new Map<string, SecretRef>(keys.map((k) => [k, { key: k }]));
        const values = keys.length === 0 ? new Map<string, string>() : await readSecrets(() => client, refs);
        masker = new Masker(values);
        if (masker.unmasked.length > 0) {
          return failure(`not sent: the values of ${masker.unmasked.join(", ")} are shorter than ${MIN_MASKED_LENGTH} characters and cannot be masked`);
        }

        const headers: Record<string, string> = {};
        for (const [name, value] of headerEntries) {
          const filled = substitute(value, values);
          if (!HEADER_VALUE.test(filled)) {
            const culprit = referencedKeys(value).find((k) => !HEADER_VALUE.test(values.get(k) ?? "")) ?? "a secret";
            return failure(`not sent: the value of ${culprit} has a character a header cannot carry (a line break, or one above U+00FF)`);
          }
          headers[name.toLowerCase()] = filled;
        }
        // Asked uncompressed (a compressed echo could not be masked); a server that compresses anyway is decompressed (http-send.ts readMasked).
        headers["accept-encoding"] = "identity";
        let body: Buffer | undefined;
        if (typeof input.body === "string") body = Buffer.from(substitute(input.body, values), "utf8");
        else if (input.body !== undefined) {
          body = Buffer.from(JSON.stringify(substituteJson(input.body, values)), "utf8");
          if (headers["content-type"] === undefined) headers["content-type"] = "application/json";
        }
        const query = queryEntries.map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(substitute(value, values))}`).join("&");
        if (query !== "") url.search = url.search === "" ? `?${query}` : `${url.search}&${query}`;

        const exchanged = await exchange({ url, method, headers, body }, keys, http, masker, options.maxOutputBytes);
        if (typeof exchanged === "string") return failure(masker.maskText(exchanged));
        const maskedHeaders: Record<string, string> = {};
        for (const [name, value] of Object.entries(exchanged.headers)) maskedHeaders[masker.maskText(name)] = masker.maskText(value);
        return result({ status: exchanged.status, headers: maskedHeaders, body: exchanged.body, truncated_bytes: exchanged.dropped, injected: keys });
      });
      const first = answer.content[0];
      report(answer.isError === true ? `error: ${first !== undefined && first.type === "text" ? first.text : ""}` : String(answer.structuredContent?.status));
      return answer;
    },
  );
}

/** Why `url` may not be requested (scheme, user name, allow list), or undefined. The message names only its origin and path. */
function refuseUrl(url: URL, http: HttpToolOptions): string | undefined {
  if (url.protocol === "http:") {
    if (!httpAllowed(http.allowHttp, url)) return `plain http is not allowed for ${url.host} (https only, unless the operator names it with --allow-http)`;
  } else if (url.protocol !== "https:") return "url must be an absolute https:// URL";
  if (url.username !== "" || url.password !== "") return "url must not contain a user name or password (use a header with {{vault:KEY}})";
  if (rulesFor(http.hosts, url).length === 0) {
    return `not allowed: ${url.origin}${url.pathname} is outside the operator's list (--allow-host): ${http.hosts.map((r) => `"${r.text.split("=")[0]}"`).join(", ")}`;
  }
  return undefined;
}

/** Why a key may not go to a URL the `matching` rules cover: the prefixes they bind, or that the key is bound to another host. */
function describeBinding(matching: readonly HostRule[]): string {
  const prefixes = matching.map((r) => r.keyPrefix).filter((p): p is string => p !== undefined);
  const open = matching.some((r) => r.keyPrefix === undefined);
  if (open) return `the key is bound to another host by --allow-host${prefixes.length > 0 ? `; keys starting with ${prefixes.join(" or ")} may go there` : ""}`;
  return `--allow-host lets only keys starting with ${prefixes.join(" or ")} go there`;
}

/**
 * The request and its redirects (at most MAX_REDIRECTS), within one deadline.
 * A 303, or a 301/302 of a POST, becomes a GET without a body; 307 and 308
 * keep the method and body. Each target must be allowed (refuseUrl) and may
 * receive every injected key (keyAllowed), else the call ends there.
 * @returns the final answer, its body masked and cut; or the reason it failed (not masked yet: the caller masks it), never an error's message.
 */
async function exchange(
  first: { url: URL; method: string; headers: Record<string, string>; body: Buffer | undefined },
  keys: readonly string[],
  http: HttpToolOptions,
  masker: Masker,
  maxBytes: number,
): Promise<Exchange | string> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), http.timeoutMs);
  const timedOut = `timed out after ${Math.round(http.timeoutMs / 100) / 10} s (--request-timeout)`;
  let { url, method, headers, body } = first;
  try {
    for (let hop = 0; ; hop++) {
      const matching = rulesFor(http.hosts, url);
      const sent = await sendHop({ url, method, headers, body, allowPrivate: privateAllowed(matching, url), lookup: http.lookup ?? systemLookup, ca: http.ca, signal: controller.signal });
      const location = sent.headers.location;
      if ([301, 302, 303, 307, 308].includes(sent.status) && location !== undefined) {
        sent.response.resume();
        if (hop >= MAX_REDIRECTS) return `more than ${MAX_REDIRECTS} redirects`;
        let next: URL;
        try {
          next = new URL(location, url);
        } catch {
          return `redirect (${sent.status}) to an invalid url`;
        }
        next.hash = "";
        const refused = refuseUrl(next, http);
        if (refused !== undefined) return `redirect (${sent.status}) refused: ${refused}`;
        const unbound = keys.find((k) => !keyAllowed(http.hosts, rulesFor(http.hosts, next), k));
        if (unbound !== undefined) return `redirect (${sent.status}) to ${next.host} refused: ${unbound} may not be sent there`;
        if (sent.status === 303 ? method !== "HEAD" : (sent.status === 301 || sent.status === 302) && method === "POST") {
          method = "GET";
          body = undefined;
          const { "content-type": _dropped, ...rest } = headers;
          headers = rest;
        }
        url = next;
        continue;
      }
      if (method === "HEAD") sent.response.resume();
      const read = method === "HEAD" ? { body: "", dropped: 0 } : await readMasked(sent.response, masker, maxBytes, controller.signal);
      return { status: sent.status, headers: sent.headers, body: read.body, dropped: read.dropped };
    }
  } catch (err) {
    if (err instanceof HopError) return err.reason === "timeout" ? timedOut : err.reason;
    // Anything else: its code only, never its message (which could quote a header or the url's query).
    const code = (err as NodeJS.ErrnoException)?.code;
    return `request failed${typeof code === "string" ? ` (${code})` : ""}`;
  } finally {
    clearTimeout(timer);
  }
}
