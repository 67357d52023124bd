import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { DEFAULT_ADDR } from "../client/index.js";
import { ConfigError } from "../config.js";

/** The vault a client command talks to. */
export interface Connection {
  /** Base URL, without a trailing slash. */
  addr: string;
  /** Bearer token (master key, scoped key or principal key). */
  token: string;
  /** Organization id: the secret commands use /orgs/:org_id/secrets. */
  org: string | undefined;
}

/** The connection flags every client command accepts. */
export interface ConnectionFlags {
  addr?: string;
  token?: string;
  org?: string;
}


/** Adds --addr, --token and --org to a command. */
export function withConnectionOptions(command: Command): Command {
  return command
    .option("--addr <url>", `vault address (VAULT_ADDR, default ${DEFAULT_ADDR})`)
    .option("--token <token>", "bearer token (VAULT_TOKEN; default: a readable ./.vault/master.key or $VAULT_DATA_DIR/master.key)")
    .option("--org <org_id>", "act on that organization's secrets (VAULT_ORG; token: a principal key)");
}

/**
 * Works out the address, token and org: a flag wins over VAULT_ADDR /
 * VAULT_TOKEN / VAULT_ORG. Without a token, the master key file of a local
 * vault is used when readable: `$VAULT_DATA_DIR/master.key`, then
 * `./.vault/master.key` (relative to `cwd`).
 * @throws ConfigError (exit 2) when there is no token, or the address is not an http(s) URL.
 */
export function resolveConnection(flags: ConnectionFlags, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): Connection {
  const addr = (flags.addr ?? nonEmpty(env.VAULT_ADDR) ?? DEFAULT_ADDR).replace(/\/+$/, "");
  let url: URL | undefined;
  try {
    url = new URL(addr);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:")) {
    throw new ConfigError(`bad vault address "${addr}": use http://HOST:PORT or https://HOST`);
  }
  const token = flags.token ?? nonEmpty(env.VAULT_TOKEN) ?? localMasterKey(env, cwd);
  if (token === undefined || token === "") {
    throw new ConfigError("no token: set VAULT_TOKEN (or pass --token); next to a local vault ./.vault/master.key is used");
  }
  const org = flags.org ?? nonEmpty(env.VAULT_ORG);
  return { addr, token, org };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value.trim();
}

function localMasterKey(env: NodeJS.ProcessEnv, cwd: string): string | undefined {
  const dirs = [nonEmpty(env.VAULT_DATA_DIR), join(cwd, ".vault")].filter((d): d is string => d !== undefined);
  for (const dir of dirs) {
    try {
      const key = readFileSync(join(dir, "master.key"), "utf8").trim();
      if (key !== "") return key;
    } catch {
      // not there or not readable: try the next place
    }
  }
  return undefined;
}
