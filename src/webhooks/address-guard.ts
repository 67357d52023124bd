import { promises as dnsPromises } from "node:dns";
import type { LookupAddress, LookupOptions } from "node:dns";
import { isIP } from "node:net";
import type { LookupFunction } from "node:net";
import ipaddr from "ipaddr.js";
import { VaultError } from "../model/errors.js";

/**
 * Resolves a host name to its addresses (IPv4 and IPv6, as strings).
 * Injected so tests can play DNS (including a rebinding DNS) without traffic.
 * @throws (rejects) when the name does not resolve.
 */
export type Lookup = (hostname: string) => Promise<string[]>;

/** The system resolver (getaddrinfo: /etc/hosts, then DNS), every address. */
export const systemLookup: Lookup = async (hostname) =>
  (await dnsPromises.lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

/** Longest webhook URL accepted, characters. */
export const MAX_URL_LENGTH = 2048;
/** How long creation waits for the host name to resolve, milliseconds. */
export const CREATE_LOOKUP_TIMEOUT_MS = 2000;

/** A delivery refused by the address guard: the host is not a public address. */
export class AddressRefusedError extends Error {
  readonly code = "EADDRREFUSED";
  constructor() {
    super("address not allowed");
    this.name = "AddressRefusedError";
  }
}

/**
 * True when `address` (an IPv4 or IPv6 literal, no brackets) is a public
 * unicast address a webhook may reach (docs/contract.md §10). Everything
 * ipaddr.js classes as anything but `unicast` is refused: loopback, private
 * (10/8, 172.16/12, 192.168/16), link-local (169.254/16 with the cloud
 * metadata address, fe80::/10), unspecified (0.0.0.0, ::), carrier-grade NAT,
 * multicast, broadcast, reserved and documentation ranges, unique-local
 * fc00::/7, and every IPv6 form that embeds an IPv4 address (IPv4-mapped
 * ::ffff:0:0/96, the deprecated IPv4-compatible ::/96 of RFC 4291 section
 * 2.5.5.1, NAT64 64:ff9b::/96, 6to4, Teredo). Not an IP: false.
 */
export function isPublicAddress(address: string): boolean {
  if (isIP(address) === 0) return false;
  try {
    const parsed = ipaddr.parse(address);
    if (parsed.kind() === "ipv6" && isIpv4Compatible(parsed as ipaddr.IPv6)) return false;
    return parsed.range() === "unicast";
  } catch {
    return false;
  }
}

/**
 * True for the IPv4-compatible IPv6 block ::/96 (RFC 4291 section 2.5.5.1,
 * deprecated): the first 96 bits are zero, so `::127.0.0.1` (written by the
 * URL parser as `::7f00:1`) embeds 127.0.0.1. ipaddr.js classes most of the
 * block as plain unicast, so it is checked here.
 */
function isIpv4Compatible(address: ipaddr.IPv6): boolean {
  return address.parts.slice(0, 6).every((part) => part === 0);
}

/**
 * The IP literal a URL's hostname names, without IPv6 brackets, or undefined
 * for a host name. The WHATWG URL parser has already rewritten the odd IPv4
 * spellings (`2130706433`, `0177.0.0.1`, `0x7f.1`, `127.1`) to dotted
 * decimal, so the guard sees the address that will be connected to.
 */
export function ipLiteralOf(hostname: string): string | undefined {
  const bare = hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname;
  return isIP(bare) === 0 ? undefined : bare;
}

/** `localhost` and `*.localhost` always mean this machine (RFC 6761), with or without a trailing dot. */
function isLocalhostName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, "");
  return name === "localhost" || name.endsWith(".localhost");
}

/**
 * Checks the syntax of a webhook URL (docs/contract.md §10): absolute,
 * `https:`, no user name or password, at most MAX_URL_LENGTH characters.
 * @returns the parsed URL; its `href` is the normalized form that is stored.
 * @throws VaultError "invalid" (400); the message never repeats the input.
 */
export function parseWebhookUrl(text: string): URL {
  if (text.length > MAX_URL_LENGTH) throw new VaultError("invalid", `url must be at most ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new VaultError("invalid", "url must be an absolute https:// URL");
  }
  if (url.protocol !== "https:") throw new VaultError("invalid", "url must use https://");
  if (url.username !== "" || url.password !== "") {
    throw new VaultError("invalid", "url must not contain a user name or password");
  }
  if (url.hostname === "") throw new VaultError("invalid", "url must name a host");
  return url;
}

const REFUSED =
  "url must not point at a loopback, private, link-local or otherwise non-public address (VAULT_WEBHOOK_ALLOW_PRIVATE lifts this for development)";

/**
 * The creation-time address guard (docs/contract.md §10): the URL's host
 * must not be, or resolve to, anything but public unicast addresses
 * (isPublicAddress). `localhost` names are refused without a lookup. A name
 * that does not resolve (now, or within CREATE_LOOKUP_TIMEOUT_MS) resolves
 * to no refused address and is accepted: the same check runs again at
 * connection time (guardedLookup), so a name that later resolves to a
 * private address (or DNS rebinding) is still refused then.
 *
 * @param allowPrivate VAULT_WEBHOOK_ALLOW_PRIVATE: skip the guard entirely.
 * @throws VaultError "invalid" (400) for a refused address.
 */
export async function checkWebhookTarget(url: URL, allowPrivate: boolean, lookup: Lookup): Promise<void> {
  if (allowPrivate) return;
  const literal = ipLiteralOf(url.hostname);
  if (literal !== undefined) {
    if (!isPublicAddress(literal)) throw new VaultError("invalid", REFUSED);
    return;
  }
  if (isLocalhostName(url.hostname)) throw new VaultError("invalid", REFUSED);
  let addresses: string[];
  let timer: NodeJS.Timeout | undefined;
  try {
    addresses = await Promise.race([
      lookup(url.hostname),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error("timeout")), CREATE_LOOKUP_TIMEOUT_MS);
      }),
    ]);
  } catch {
    // Not resolvable now: nothing to refuse; delivery checks the name again.
    return;
  } finally {
    clearTimeout(timer);
  }
  if (!addresses.every(isPublicAddress)) throw new VaultError("invalid", REFUSED);
}

/**
 * The connection-time guard: a `lookup` for https.request that resolves the
 * name through `lookup` and refuses the connection (AddressRefusedError)
 * when any address is not public, so the address connected to is the
 * address checked (no window for DNS rebinding). IP literals never reach a
 * lookup function; the transport checks those itself (ipLiteralOf).
 * Answers in both forms net asks for (`all: true` or a single address).
 */
export function guardedLookup(allowPrivate: boolean, lookup: Lookup): LookupFunction {
  return (hostname: string, options: LookupOptions, callback) => {
    const fail = (err: NodeJS.ErrnoException) => callback(err, options.all ? [] : "", undefined);
    if (!allowPrivate && isLocalhostName(hostname)) {
      fail(new AddressRefusedError());
      return;
    }
    lookup(hostname).then(
      (addresses) => {
        if (!allowPrivate && !addresses.every(isPublicAddress)) {
          fail(new AddressRefusedError());
          return;
        }
        const family = options.family === "IPv4" ? 4 : options.family === "IPv6" ? 6 : (options.family ?? 0);
        const found: LookupAddress[] = addresses
          .map((address) => ({ address, family: isIP(address) }))
          .filter((a) => a.family !== 0 && (family === 0 || a.family === family));
        const first = found[0];
        if (first === undefined) {
          fail(Object.assign(new Error(`${hostname} does not resolve`), { code: "ENOTFOUND" }));
          return;
        }
        if (options.all) callback(null, found);
        else callback(null, first.address, first.family);
      },
      (err: unknown) => fail(Object.assign(new Error("lookup failed"), { code: (err as NodeJS.ErrnoException)?.code ?? "ENOTFOUND" })),
    );
  };
}
