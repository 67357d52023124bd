import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { DEFAULT_ADDR, DEFAULT_TIMEOUT_MS } from "@ephemeral-vault/client";
import { ADDRESS_FILE_NAME } from "../../runtime/address-file.js";
import { parseDuration } from "../duration.js";
import { ConfigError } from "../../config.js";
import { readLogin } from "./login-file.js";

/** The vault a client command talks to. */
export interface Connection {
  /** Base URL, without a trailing slash. */
  addr: string;
  /** Bearer token (master key, scoped key or principal key). */
  token: string;
  /** Organization id: the secret commands use /orgs/:org_id/secrets. */
  org: string | undefined;
  /** The address file `addr` was read from (a local vault on another port), or undefined. */
  addrFile?: string | undefined;
  /** Milliseconds one request may take; 0: no limit. */
  timeoutMs: number;
}

/** The connection flags every client command accepts. */
export interface ConnectionFlags {
  addr?: string;
  token?: string;
  tokenFile?: string;
  org?: string;
  timeout?: string;
}

/**
 * Adds --addr, --token, --token-file, --org and --timeout to a command;
 * `org: false` leaves out --org (commands that take no org, or name it as an argument).
 */
export function withConnectionOptions(command: Command, options: { org?: boolean } = {}): Command {
  command
    .option("--addr <url>", `vault address (VAULT_ADDR; default: a local vault's recorded address, else ${DEFAULT_ADDR})`)
    .option("--token <token>", "bearer token (VAULT_TOKEN); on the command line it is visible to other local users: prefer VAULT_TOKEN or --token-file")
    .option("--token-file <file>", "read the bearer token from FILE (VAULT_TOKEN_FILE); default for a vault on this machine: a readable ./.vault/master.key or $VAULT_DATA_DIR/master.key");
  if (options.org !== false) command.option("--org <org_id>", "act on that organization's secrets (VAULT_ORG; token: a principal key)");
  return command.option("--timeout <duration>", `give up on a request, its retries included, after DURATION (30, 30s, 2m; 0: never); default ${DEFAULT_TIMEOUT_MS / 1000}s`);
}

/**
 * Works out the address, token and org: a flag wins over VAULT_ADDR /
 * VAULT_TOKEN / VAULT_ORG, and the token comes from `--token`, then
 * `--token-file`, then VAULT_TOKEN, then VAULT_TOKEN_FILE (docs/cli.md,
 * "Connecting"), then the key `ephemeral-vault login` stored for this very
 * address (login-file.ts; its org is then the default org). Without any of them, and only when the address is a
 * loopback one by a name that needs no DNS (isLoopbackUrl: `localhost`,
 * 127.0.0.0/8, [::1]; not `*.localhost`), the master key file of a
 * local vault is used when readable: `$VAULT_DATA_DIR/master.key`, then
 * `./.vault/master.key` (relative to `cwd`). The local master key is never
 * sent to another host. Without `--addr` and VAULT_ADDR, the address a local
 * vault recorded in its data dir (`address`, the same two places) is used
 * when it is a loopback one, else http://127.0.0.1:8484. `--timeout` is a
 * DURATION (`0`: no limit), default 30 seconds.
 * @throws ConfigError (exit 2) when there is no token, a token file cannot be
 * read or is empty, the address is not an http(s) URL, or the timeout is not a DURATION.
 */
export function resolveConnection(flags: ConnectionFlags, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): Connection {
  const { addr, url, addrFile } = resolveAddress(flags, env, cwd);
  const timeoutMs = timeoutOf(flags);
  const fromFile = (file: string | undefined, source: string) => (file === undefined ? undefined : readTokenFile(file, source));
  const given =
    flags.token ??
    fromFile(flags.tokenFile, "--token-file") ??
    nonEmpty(env.VAULT_TOKEN) ??
    fromFile(nonEmpty(env.VAULT_TOKEN_FILE), "VAULT_TOKEN_FILE");
  // The key `ephemeral-vault login` stored, for the vault it was made by only.
  const login = given === undefined ? readLogin(env) : undefined;
  const stored = login !== undefined && login.url === addr ? login : undefined;
  const token = given ?? stored?.token ?? (isLoopbackUrl(url) ? localMasterKey(env, cwd) : undefined);
  if (token === undefined || token === "") {
    const local = isLoopbackUrl(url) ? "; next to a local vault ./.vault/master.key is used" : `; the local master.key is used only for a vault on this machine, not for ${url.host}`;
    throw new ConfigError(`no token: set VAULT_TOKEN (or pass --token-file)${local}`);
  }
  const org = flags.org ?? nonEmpty(env.VAULT_ORG) ?? (stored !== undefined && token === stored.token ? stored.org_id : undefined);
  return { addr, token, org, addrFile, timeoutMs };
}

/**
 * The vault address alone, for the commands that need no token (`status`,
 * `destroy`: the receipt is the capability): `--addr`, else VAULT_ADDR, else
 * the address of the stored login (`ephemeral-vault login`), else
 * the address a local vault recorded (loopback only), else
 * http://127.0.0.1:8484 (docs/cli.md, "Connecting").
 * @returns the address without a trailing slash, parsed, and the address file it came from (if any).
 * @throws ConfigError (exit 2) when the address is not an http(s) URL.
 */
export function resolveAddress(flags: { addr?: string | undefined }, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): { addr: string; url: URL; addrFile: string | undefined } {
  const explicit = flags.addr ?? nonEmpty(env.VAULT_ADDR) ?? readLogin(env)?.url;
  const recorded = explicit === undefined ? localAddress(env, cwd) : undefined;
  const addr = (explicit ?? recorded?.addr ?? DEFAULT_ADDR).replace(/\/+$/, "");
  let url: URL | undefined;
  try {
    url = new URL(addr);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:")) {
    throw new ConfigError(`bad vault address "${addr}": use http://HOST:PORT or https://HOST`);
  }
  return { addr, url, addrFile: recorded?.file };
}

/**
 * The time limit of one request, its retries included, from `--timeout DURATION`, milliseconds:
 * default 30 s, `0` for none (docs/cli.md "Connecting").
 * @throws ConfigError (exit 2) for a bad DURATION.
 */
export function timeoutOf(flags: ConnectionFlags): number {
  if (flags.timeout === undefined) return DEFAULT_TIMEOUT_MS;
  return flags.timeout.trim() === "0" ? 0 : parseDuration(flags.timeout) * 1000;
}

/**
 * The address a local vault recorded in its data dir (assembly/server.ts writes
 * `address` beside master.key at the start and removes it at a clean stop):
 * `$VAULT_DATA_DIR/address`, then `./.vault/address`. Only an http(s)
 * loopback address is taken, like the master key file: a file naming another
 * host is ignored.
 */
function localAddress(env: NodeJS.ProcessEnv, cwd: string): { addr: string; file: string } | undefined {
  for (const dir of dataDirs(env, cwd)) {
    const file = join(dir, ADDRESS_FILE_NAME);
    let text: string;
    try {
      text = readFileSync(file, "utf8").trim();
    } catch {
      continue;
    }
    try {
      const url = new URL(text);
      if ((url.protocol === "http:" || url.protocol === "https:") && isLoopbackUrl(url)) return { addr: text, file };
    } catch {
      // not a URL: ignore the file
    }
  }
  return undefined;
}

/** Where a local vault's data dir may be: $VAULT_DATA_DIR, then ./.vault. */
function dataDirs(env: NodeJS.ProcessEnv, cwd: string): string[] {
  return [nonEmpty(env.VAULT_DATA_DIR), join(cwd, ".vault")].filter((d): d is string => d !== undefined);
}

/**
 * True when `url` names this machine by a name that needs no DNS: the
 * literal `localhost`, an IPv4 literal in 127.0.0.0/8, or `[::1]`
 * (docs/cli.md, "Connecting"). A subdomain of localhost (`app.localhost`)
 * is not taken: RFC 6761 section 6.3 lets resolvers answer it with loopback,
 * but not every one does (a DNS server may answer it with any address), so
 * the local master key could leave the machine. `localhost` itself is kept:
 * the system resolves it from its hosts file.
 */
export function isLoopbackUrl(url: URL): boolean {
  const host = url.hostname.toLowerCase();
  return host === "localhost" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host) || host === "[::1]";
}

/** The token in `file` (surrounding whitespace trimmed). @throws ConfigError naming `source` when unreadable or empty. */
function readTokenFile(file: string, source: string): string {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new ConfigError(`${source}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? "error"})`);
  }
  const token = text.trim();
  if (token === "") throw new ConfigError(`${source}: ${file} is empty`);
  return token;
}

/**
 * The warning for a secret given on the command line (`--token T`, or a
 * VALUE argument): every local user can read a process's arguments
 * (`ps`, /proc/PID/cmdline) while it runs (docs/cli.md, "Connecting").
 */
export function argvWarning(what: "--token" | "VALUE"): string {
  const instead = what === "--token" ? "use VAULT_TOKEN or --token-file" : "omit VALUE to read it from stdin";
  return `ephemeral-vault: warning: ${what} on the command line is visible to other local users (ps, /proc); ${instead}\n`;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value.trim();
}

function localMasterKey(env: NodeJS.ProcessEnv, cwd: string): string | undefined {
  for (const dir of dataDirs(env, cwd)) {
    try {
      const key = readFileSync(join(dir, "master.key"), "utf8").trim();
      if (key !== "") return key;
    } catch {
      // not there or not readable: try the next place
    }
  }
  return undefined;
}
