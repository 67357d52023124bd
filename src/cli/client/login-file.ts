import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join } from "node:path";

/**
 * What `ephemeral-vault login` keeps (docs/cli.md, "Signing in"): the
 * vault's address and the short-lived principal key minted for the person,
 * with its id (for `logout`), its org and its end. Nothing of the identity
 * provider (no ID, access or refresh token).
 */
export interface StoredLogin {
  /** The vault's address, without a trailing slash. */
  url: string;
  /** The `vpk_` token. */
  token: string;
  /** The key's id (`pk_...`). */
  key_id: string;
  org_id: string;
  /** Unix seconds. */
  valid_before: number;
}

/**
 * The login file: `$XDG_CONFIG_HOME/ephemeral-vault/login.json` when
 * XDG_CONFIG_HOME is an absolute path (the XDG Base Directory
 * Specification), else `~/.config/ephemeral-vault/login.json`.
 */
export function loginFilePath(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CONFIG_HOME;
  const base = xdg !== undefined && xdg !== "" && isAbsolute(xdg) ? xdg : join(env.HOME ?? homedir(), ".config");
  return join(base, "ephemeral-vault", "login.json");
}

/** The stored login, or undefined when there is none or the file is not one. */
export function readLogin(env: NodeJS.ProcessEnv = process.env): StoredLogin | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(loginFilePath(env), "utf8"));
  } catch {
    return undefined;
  }
  const p = parsed as Partial<StoredLogin> | null;
  if (p === null || typeof p !== "object" || typeof p.url !== "string" || typeof p.token !== "string" || typeof p.key_id !== "string" || typeof p.org_id !== "string" || typeof p.valid_before !== "number") {
    return undefined;
  }
  return { url: p.url, token: p.token, key_id: p.key_id, org_id: p.org_id, valid_before: p.valid_before };
}

/**
 * Stores the login: the directory made with mode 0700 when missing, the file
 * written with mode 0600 beside it and renamed over the old one (never
 * readable by others, even for a moment).
 * @returns the file's path.
 */
export function writeLogin(login: StoredLogin, env: NodeJS.ProcessEnv = process.env): string {
  const file = loginFilePath(env);
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(login)}\n`, { mode: 0o600, flag: "w" });
  chmodSync(temp, 0o600);
  renameSync(temp, file);
  return file;
}

/** Removes the login file (none: nothing). */
export function removeLogin(env: NodeJS.ProcessEnv = process.env): void {
  rmSync(loginFilePath(env), { force: true });
}
