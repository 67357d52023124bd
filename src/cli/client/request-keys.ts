import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import { ConfigError } from "../../config.js";

/**
 * Where the command line keeps the private keys of the requests it made
 * (docs/requests.md, "From the command line, the client and MCP"): one file
 * per request, `<config dir>/requests/<id>.json`, mode 0600, in a directory
 * of mode 0700. The private key is the only way to read the answer: it never
 * reaches the vault, a log or an error message.
 */

/** The variable that chooses the command line's config directory (docs/cli.md, "request"). */
export const CONFIG_DIR_SETTING = "VAULT_CONFIG_DIR";

/** A request's key file (version 1). */
export interface RequestKeyFile {
  v: 1;
  /** The request's id: 64 hex characters. */
  id: string;
  /** The answer link that was sent. */
  url: string;
  /** The vault address the request was made at (where `request wait` reads the answer). */
  addr: string;
  /** The org it was made in, or null for a global request. */
  org: string | null;
  /** The asker's private key (base64url, 96 bytes). */
  private_key: string;
  description: string;
  /** Unix seconds. */
  created_at: number;
  /** Unix seconds: when the open request expires. */
  expires_at: number;
}

const REQUEST_ID = /^[0-9a-f]{64}$/;

/**
 * The command line's config directory: `VAULT_CONFIG_DIR` (absolute), else
 * `$XDG_CONFIG_HOME/ephemeral-vault`, else `%APPDATA%\ephemeral-vault` on
 * Windows, else `~/.config/ephemeral-vault`.
 * @param env the environment (process.env).
 * @param home the home directory (os.homedir()).
 * @throws ConfigError (exit 2) when VAULT_CONFIG_DIR is set but not an absolute path.
 */
export function configDir(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string {
  const chosen = env[CONFIG_DIR_SETTING];
  if (chosen !== undefined && chosen !== "") {
    if (!isAbsolute(chosen)) throw new ConfigError(`${CONFIG_DIR_SETTING} must be an absolute path, not ${chosen}`);
    return chosen;
  }
  const xdg = env.XDG_CONFIG_HOME;
  if (xdg !== undefined && isAbsolute(xdg)) return join(xdg, "ephemeral-vault");
  if (process.platform === "win32" && env.APPDATA !== undefined && isAbsolute(env.APPDATA)) return join(env.APPDATA, "ephemeral-vault");
  return join(home, ".config", "ephemeral-vault");
}

/** `<config dir>/requests`. */
export function requestsDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(configDir(env), "requests");
}

/**
 * Checks a request id given on the command line: 64 lowercase hex
 * characters (docs/requests.md), so it names one file and never a path.
 * @throws ConfigError (exit 2) otherwise.
 */
export function requestId(text: string): string {
  const id = text.trim();
  if (!REQUEST_ID.test(id)) throw new ConfigError("a request id is 64 lowercase hex characters (as `request` and `request ls` print it)");
  return id;
}

/** The path of a request's key file. */
export function keyFilePath(id: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(requestsDir(env), `${requestId(id)}.json`);
}

/**
 * Writes a request's key file, mode 0600 (created, never overwritten), in
 * `<config dir>/requests` (made mode 0700 if need be; its mode set to 0700).
 * @returns the file's path.
 * @throws Error from the file system (the caller deletes the request it cannot keep a key for).
 */
export function saveRequestKey(entry: RequestKeyFile, env: NodeJS.ProcessEnv = process.env): string {
  const dir = requestsDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const file = keyFilePath(entry.id, env);
  writeFileSync(file, `${JSON.stringify(entry)}\n`, { mode: 0o600, flag: "wx" });
  return file;
}

/**
 * Reads a request's key file.
 * @returns the entry, or undefined when there is none.
 * @throws ConfigError (exit 2) when it cannot be read or is not a key file.
 */
export function loadRequestKey(id: string, env: NodeJS.ProcessEnv = process.env): RequestKeyFile | undefined {
  const file = keyFilePath(id, env);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new ConfigError(`cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? "error"})`);
  }
  let parsed: Partial<RequestKeyFile>;
  try {
    parsed = JSON.parse(text) as Partial<RequestKeyFile>;
  } catch {
    throw new ConfigError(`${file} is not a request key file (not JSON)`);
  }
  if (parsed.v !== 1 || parsed.id !== id || typeof parsed.private_key !== "string" || typeof parsed.addr !== "string") {
    throw new ConfigError(`${file} is not a request key file for ${id}`);
  }
  return parsed as RequestKeyFile;
}

/** Removes a request's key file. @returns whether there was one. */
export function removeRequestKey(id: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const file = keyFilePath(id, env);
  try {
    rmSync(file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw err;
  }
}
