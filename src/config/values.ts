import { isIP } from "node:net";
import { parseRootKey } from "../crypto/cipher.js";
import { parseLicensePublicKey } from "../crypto/license.js";
import { LOG_LEVELS } from "../log/levels.js";
import type { LogLevel } from "../log/levels.js";
import { ConfigError } from "./types.js";
import { DURATION_FORMS, durationSeconds } from "../model/duration.js";

// The value kinds of the settings table (settings.ts): each turns the text of
// a variable or flag into its typed value, or throws a one-line ConfigError
// naming the variable (docs/configuration.md). A boolean flag given bare
// arrives as `true`; every other kind needs text.

/** Text, or `true` from a bare boolean flag. */
export type Raw = string | boolean;

/** The text of a setting that takes a value. @throws ConfigError for a bare flag. */
export function textOf(raw: Raw, name: string): string {
  if (typeof raw === "boolean") throw new ConfigError(`${name} needs a value`);
  return raw;
}

/**
 * A whole number from `min` to `max` (surrounding white space ignored).
 * @throws ConfigError `NAME must be a whole number from MIN to MAX`.
 */
export function wholeNumber(raw: Raw, name: string, min: number, max: number): number {
  const text = textOf(raw, name).trim();
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < min || n > max) throw new ConfigError(`${name} must be a whole number from ${min} to ${max}`);
  return n;
}

/**
 * true/1/yes or false/0/no (any case; empty is false); a bare flag is true.
 * @throws ConfigError `NAME must be true or false`.
 */
export function boolean(raw: Raw, name: string): boolean {
  if (typeof raw === "boolean") return raw;
  const s = raw.trim().toLowerCase();
  if (s === "true" || s === "1" || s === "yes") return true;
  if (s === "false" || s === "0" || s === "no" || s === "") return false;
  throw new ConfigError(`${name} must be true or false`);
}

const HOST_NAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/**
 * An IPv4 or IPv6 address, or a syntactically valid host name (all-digit
 * dotted names must be IPv4); empty means the default 127.0.0.1.
 * @throws ConfigError naming the variable.
 */
export function host(raw: Raw, name: string): string {
  const text = textOf(raw, name).trim() || "127.0.0.1";
  const ok = isIP(text) !== 0 || (!/^[\d.]+$/.test(text) && !text.includes(":") && HOST_NAME.test(text));
  if (!ok) throw new ConfigError(`${name} must be an IP address or a host name`);
  return text;
}

/**
 * The master bearer token: at least 16 characters, no white space; the
 * message never repeats the value.
 * @throws ConfigError naming the variable.
 */
export function masterToken(raw: Raw, name: string): string {
  const text = textOf(raw, name);
  if (text.length < 16) throw new ConfigError(`${name} must be at least 16 characters`);
  if (/\s/.test(text)) throw new ConfigError(`${name} must not contain white space`);
  return text;
}

/** The /metrics token: at least 16 characters, no white space. @throws ConfigError naming the variable. */
export function metricsToken(raw: Raw, name: string): string {
  const text = textOf(raw, name);
  if (text.length < 16 || /\s/.test(text)) throw new ConfigError(`${name} must be at least 16 characters, without white space`);
  return text;
}

/** A secret of at least 16 characters (webhook HMAC key). @throws ConfigError naming the variable. */
export function longSecret(raw: Raw, name: string): string {
  const text = textOf(raw, name);
  if (text.length < 16) throw new ConfigError(`${name} must be at least 16 characters`);
  return text;
}

/** A 32-byte root key: 64 hex characters or base64. @throws ConfigError naming the variable, never the value. */
export function rootKey(raw: Raw, name: string): Buffer {
  const key = parseRootKey(textOf(raw, name));
  if (key === undefined) throw new ConfigError(`${name} must be 64 hex characters or base64 of 32 bytes`);
  return key;
}

/** Comma-separated root keys (empty items skipped). @throws ConfigError as rootKey(). */
export function rootKeyList(raw: Raw, name: string): Buffer[] {
  return textOf(raw, name)
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")
    .map((s) => rootKey(s, name));
}

/**
 * Host names for an ACME certificate, comma-separated (docs/deploy.md
 * "Certificates by ACME"): each a DNS name of letters, digits and hyphens
 * in dot-separated labels, lower-cased, duplicates dropped; no IP address
 * (HTTP-01 validates names, RFC 8555 §8.3) and no wildcard (it needs DNS-01).
 * @throws ConfigError naming the variable and the refused name.
 */
export function domainList(raw: Raw, name: string): string[] {
  const names = textOf(raw, name)
    .split(",")
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== "");
  if (names.length === 0) throw new ConfigError(`${name} must name at least one domain`);
  const label = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
  for (const domain of names) {
    const labels = domain.replace(/\.$/, "").split(".");
    if (domain.length > 253 || labels.some((l) => !label.test(l)) || /^[0-9.]+$/.test(domain)) {
      throw new ConfigError(`${name}: ${JSON.stringify(domain)} is not a DNS name (no IP address, no wildcard: HTTP-01 validates names)`);
    }
  }
  return [...new Set(names)];
}

/** An email address for an ACME account: something@something, no white space. @throws ConfigError naming the variable. */
export function email(raw: Raw, name: string): string {
  const text = textOf(raw, name).trim();
  if (!/^[^\s@]+@[^\s@]+$/.test(text)) throw new ConfigError(`${name} must be an email address`);
  return text;
}

/** A file path (not checked here: the component that reads it says what is wrong). @throws ConfigError when it is blank. */
export function filePath(raw: Raw, name: string): string {
  const text = textOf(raw, name);
  if (text.trim() === "") throw new ConfigError(`${name} must be a file path`);
  return text;
}

/** A TCP port, 0 to 65535. @throws ConfigError naming the variable. */
export function port(raw: Raw, name: string): number {
  return wholeNumber(raw, name, 0, 65535);
}

/** An absolute http(s) URL, trailing slashes dropped. @throws ConfigError naming the variable. */
export function httpUrl(raw: Raw, name: string): string {
  const text = textOf(raw, name);
  let protocol = "";
  try {
    protocol = new URL(text).protocol;
  } catch {
    // refused below
  }
  if (protocol !== "http:" && protocol !== "https:") throw new ConfigError(`${name} must be an absolute http(s) URL`);
  return text.replace(/\/+$/, "");
}

/** A postgres:// or postgresql:// URL (trimmed). @throws ConfigError naming the variable, never the URL. */
export function postgresUrl(raw: Raw, name: string): string {
  const text = textOf(raw, name).trim();
  let protocol = "";
  try {
    protocol = new URL(text).protocol;
  } catch {
    throw new ConfigError(`${name} must be a URL: postgres://user:password@host:5432/database`);
  }
  if (protocol !== "postgres:" && protocol !== "postgresql:") throw new ConfigError(`${name} must start with postgres:// or postgresql://`);
  return text;
}

/** An Ed25519 public key: base64 of 32 bytes, or PEM (trimmed). @throws ConfigError naming the variable. */
export function licensePublicKey(raw: Raw, name: string): string {
  const text = textOf(raw, name).trim();
  if (parseLicensePublicKey(text) === undefined) {
    throw new ConfigError(`${name} must be base64 of a 32-byte Ed25519 key, or a PEM public key`);
  }
  return text;
}

/** One of LOG_LEVELS (any case). @throws ConfigError listing them. */
export function logLevel(raw: Raw, name: string): LogLevel {
  const text = textOf(raw, name).trim().toLowerCase();
  const level = LOG_LEVELS.find((l) => l === text);
  if (level === undefined) throw new ConfigError(`${name} must be one of ${LOG_LEVELS.join(", ")}`);
  return level;
}

/** True for a loopback host name or address: `localhost`, 127.0.0.0/8, `::1` (brackets allowed). */
export function isLoopbackName(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h === "::1" || (isIP(h) === 4 && h.startsWith("127."));
}

/**
 * An OpenID Connect issuer URL (docs/sso.md, "Setup"): https, or http only
 * on a loopback host (development and tests); trailing slashes kept, as the
 * provider's `issuer` is compared exactly (OpenID Connect Discovery 1.0 §4.3).
 * @throws ConfigError naming the variable.
 */
export function oidcIssuer(raw: Raw, name: string): string {
  const text = textOf(raw, name).trim();
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConfigError(`${name} must be an absolute https URL`);
  }
  if (url.protocol === "https:" || (url.protocol === "http:" && isLoopbackName(url.hostname))) return text;
  throw new ConfigError(`${name} must be an https URL (plain http only on a loopback host)`);
}

/** Scopes separated by spaces, `openid` among them. @throws ConfigError naming the variable. */
export function oidcScopes(raw: Raw, name: string): string {
  const scopes = textOf(raw, name).trim().split(/\s+/).filter((s) => s !== "");
  if (!scopes.includes("openid")) throw new ConfigError(`${name} must include the scope openid`);
  if (scopes.some((s) => !/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(s))) throw new ConfigError(`${name} must be scope names separated by spaces`);
  return scopes.join(" ");
}

/** A claim name: 1-128 printable characters without white space. @throws ConfigError naming the variable. */
export function claimName(raw: Raw, name: string): string {
  const text = textOf(raw, name).trim();
  if (!/^[\x21-\x7e]{1,128}$/.test(text)) throw new ConfigError(`${name} must be a claim name (no white space)`);
  return text;
}

/** An org id, `org_` and its letters. @throws ConfigError naming the variable. */
export function orgId(raw: Raw, name: string): string {
  const text = textOf(raw, name).trim();
  if (!/^org_[A-Za-z0-9_-]{1,64}$/.test(text)) throw new ConfigError(`${name} must be an org id (org_...)`);
  return text;
}

/**
 * A role map, `group=role` pairs separated by commas, in their order (docs/sso.md,
 * "Roles"): each group 1-256 characters without `=` or `,`, each role a role
 * name (`^[a-z][a-z0-9_-]{0,63}$`, docs/orgs.md). Spaces around the parts are
 * ignored. @throws ConfigError naming the variable.
 */
export function roleMap(raw: Raw, name: string): Array<{ group: string; role: string }> {
  const pairs: Array<{ group: string; role: string }> = [];
  for (const part of textOf(raw, name).split(",")) {
    if (part.trim() === "") continue;
    const at = part.lastIndexOf("=");
    const group = part.slice(0, at).trim();
    const role = part.slice(at + 1).trim();
    if (at < 0 || group === "" || group.length > 256 || !/^[a-z][a-z0-9_-]{0,63}$/.test(role)) {
      throw new ConfigError(`${name} must be group=role pairs separated by commas (vault-admins=admin,devs=writer)`);
    }
    pairs.push({ group, role });
  }
  if (pairs.length === 0) throw new ConfigError(`${name} must name at least one group=role pair`);
  return pairs;
}

/** A duration (src/model/duration.ts: `90`, `30m`, `12h`, `7d`), in seconds. @throws ConfigError naming the variable. */
export function duration(raw: Raw, name: string): number {
  const seconds = durationSeconds(textOf(raw, name));
  if (seconds === undefined) throw new ConfigError(`${name} must be a duration: ${DURATION_FORMS}`);
  return seconds;
}
