import { ConfigError } from "../config.js";
import { ipLiteralOf, isPublicAddress } from "../webhooks/address-guard.js";
import type { Lookup } from "../webhooks/address-guard.js";

/** One `mcp --allow-host PATTERN[=PREFIX]` (docs/mcp.md, "http_request"). */
export interface HostRule {
  /** The option as given, for messages. */
  text: string;
  /** The host, lower-case as the URL parser writes it (IPv6 in brackets); for a wildcard, the part after `*.`. */
  host: string;
  /** `*.example.com`: any name ending in `.example.com` (one or more labels before it), not `example.com` itself. */
  wildcard: boolean;
  /** The port, or undefined: then any port of the host (name a port to narrow it). */
  port: number | undefined;
  /** The path prefix (`/v1/`), or undefined for any path. */
  path: string | undefined;
  /** `=PREFIX`: only keys starting with it may be sent to this host (and such keys only to hosts that bind them); undefined: any key no rule binds (the weaker form). */
  keyPrefix: string | undefined;
}

/** How http_request was configured (`mcp --allow-host ...`: docs/mcp.md, "http_request"). */
export interface HttpToolOptions {
  /** `--allow-host PATTERN[=PREFIX]`: the URLs it may reach and the keys each may receive. */
  hosts: HostRule[];
  /** `--allow-http HOST`: hosts (`host` or `host:port`) that may be reached over plain http. */
  allowHttp: ReadonlySet<string>;
  /** `--request-timeout`, milliseconds, for the whole call (every redirect included). */
  timeoutMs: number;
  /** Name resolution, default the system resolver (tests play DNS with it). */
  lookup?: Lookup | undefined;
  /** An extra trusted CA (PEM), for in-process tests; a deployment uses NODE_EXTRA_CA_CERTS. */
  ca?: string | undefined;
}

/**
 * Parses an `--allow-host` value (docs/mcp.md, "http_request"): a host
 * (`api.example.com`, `127.0.0.1`, `[::1]`) or `*.example.com`, an
 * optional `:PORT`, an optional path prefix (`api.example.com/v1/`), and an
 * optional `=PREFIX` binding the secrets that may go there. The host is
 * normalized as the WHATWG URL parser writes it (lower case, punycode,
 * dotted-decimal IPv4), as is the path.
 * @throws ConfigError (exit 2) for a scheme, a user name, a query, a
 *   wildcard anywhere but a leading `*.`, or an empty host or PREFIX.
 */
export function parseHostRule(text: string): HostRule {
  const bad = (why: string) => new ConfigError(`bad --allow-host "${text}": ${why}, e.g. "api.example.com", "*.example.com/v1/" or "api.example.com=prod/example/"`);
  const eq = text.indexOf("=");
  const pattern = (eq < 0 ? text : text.slice(0, eq)).trim();
  const keyPrefix = eq < 0 ? undefined : text.slice(eq + 1);
  if (keyPrefix === "") throw bad("an empty =PREFIX");
  if (pattern.includes("://")) throw bad("no scheme (https is implied; --allow-http HOST for http)");
  if (/[?#@\s\\]/.test(pattern)) throw bad("no query, fragment, user name, space or backslash");
  const slash = pattern.indexOf("/");
  const hostPart = slash < 0 ? pattern : pattern.slice(0, slash);
  const pathPart = slash < 0 ? undefined : pattern.slice(slash);
  const wildcard = hostPart.startsWith("*.");
  const bare = wildcard ? hostPart.slice(2) : hostPart;
  if (bare === "" || bare.includes("*")) throw bad("a host, with * only as a leading *.");
  let url: URL;
  try {
    url = new URL(`https://${bare}${pathPart ?? "/"}`);
  } catch {
    throw bad("not a host name or address");
  }
  if (wildcard && ipLiteralOf(url.hostname) !== undefined) throw bad("a wildcard names host names, not addresses");
  // The URL parser drops a port that is the scheme's default (`:443`): read the one written.
  const written = /:(\d+)$/.exec(bare)?.[1];
  const port = written === undefined ? undefined : Number(written);
  return { text, host: url.hostname, wildcard, port, path: pathPart === undefined ? undefined : url.pathname, keyPrefix };
}

/** The port a URL connects to: its own, or its scheme's default. */
function portOf(url: URL): number {
  return url.port !== "" ? Number(url.port) : url.protocol === "http:" ? 80 : 443;
}

/**
 * True when `rule` covers `url`: the host (exactly, or under the wildcard's
 * domain), the port (the rule's; any when it names none) and the path
 * prefix. A path prefix ending in `/` matches the paths
 * under it; one without matches itself and the paths under it (whole
 * segments: `/v1` never matches `/v10`). Under a path prefix, an encoded
 * `/` or `\` (`%2F`, `%5C`) is refused outright, since a server may decode it
 * and leave the prefix (`/v1/..%2Fadmin`); `..` segments are already
 * resolved by the URL parser.
 */
export function ruleMatches(rule: HostRule, url: URL): boolean {
  const hostOk = rule.wildcard ? url.hostname.endsWith(`.${rule.host}`) && url.hostname.length > rule.host.length + 1 : url.hostname === rule.host;
  if (!hostOk) return false;
  if (rule.port !== undefined && portOf(url) !== rule.port) return false;
  if (rule.path === undefined) return true;
  if (/%2f|%5c/i.test(url.pathname)) return false;
  if (rule.path.endsWith("/")) return url.pathname.startsWith(rule.path);
  return url.pathname === rule.path || url.pathname.startsWith(`${rule.path}/`);
}

/** The rules that cover `url` (ruleMatches). */
export function rulesFor(rules: readonly HostRule[], url: URL): HostRule[] {
  return rules.filter((rule) => ruleMatches(rule, url));
}

/**
 * True when secret `key` may be sent to a URL that `matching` rules cover
 * (docs/mcp.md, "Which URLs, which keys"): a covering rule has a
 * `=PREFIX` that `key` starts with (plain string comparison: end PREFIX with
 * `/` to bind whole path segments); or a covering rule has no `=PREFIX` (the
 * weaker form) and `key` is bound to no host at all, i.e. no rule of `all`
 * has a PREFIX it starts with. So a key bound to `api.example.com` never goes
 * to a host an unbound wildcard lets in.
 * @param all every `--allow-host` rule. @param matching those covering the URL (rulesFor).
 */
export function keyAllowed(all: readonly HostRule[], matching: readonly HostRule[], key: string): boolean {
  const under = (rule: HostRule) => rule.keyPrefix !== undefined && key.startsWith(rule.keyPrefix);
  if (matching.some(under)) return true;
  return matching.some((rule) => rule.keyPrefix === undefined) && !all.some(under);
}

/**
 * True when the address guard is lifted for `url` (docs/mcp.md,
 * "http_request"): an exact (non-wildcard) rule covering it names a
 * non-public IP address (`127.0.0.1`, `[::1]`, `10.0.0.5`) or a `localhost`
 * name itself. A wildcard never lifts it, nor does a name that merely
 * resolves to such an address.
 */
export function privateAllowed(matching: readonly HostRule[], url: URL): boolean {
  return matching.some((rule) => {
    if (rule.wildcard || rule.host !== url.hostname) return false;
    const literal = ipLiteralOf(rule.host);
    if (literal !== undefined) return !isPublicAddress(literal);
    const name = rule.host.replace(/\.$/, "");
    return name === "localhost" || name.endsWith(".localhost");
  });
}

/**
 * True when `url` may use plain http (docs/mcp.md): `--allow-http HOST`
 * names its host (`HOST`, or `HOST:PORT` for that port only).
 */
export function httpAllowed(allowHttp: ReadonlySet<string>, url: URL): boolean {
  return allowHttp.has(url.hostname) || allowHttp.has(`${url.hostname}:${portOf(url)}`);
}
