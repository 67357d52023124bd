import { readFileSync } from "node:fs";
import { rootCertificates } from "node:tls";
import type { FetchLike } from "@ephemeral-vault/client";
import { Agent, fetch as undiciFetch } from "undici";
import { ConfigError } from "../../config.js";

let made: { path: string | undefined; fetch: FetchLike | undefined } | undefined;

/**
 * The fetch the CLI and the MCP server give their VaultClient: with
 * VAULT_CACERT (a PEM file of one or more CA certificates), undici's fetch
 * over an Agent that trusts those CAs besides Node's own roots
 * (docs/cli.md, "Connecting"); without it, undefined (the client's default,
 * globalThis.fetch). undici is the library Node's own fetch is built on, so
 * errors and behaviour stay those of the default. Made once per process.
 * @param env usually process.env.
 * @throws ConfigError when VAULT_CACERT cannot be read or holds no PEM certificate (exit 2).
 */
export function cliFetch(env: Record<string, string | undefined> = process.env): FetchLike | undefined {
  const path = env.VAULT_CACERT === "" ? undefined : env.VAULT_CACERT;
  if (made !== undefined && made.path === path) return made.fetch;
  made = { path, fetch: path === undefined ? undefined : caFetch(path) };
  return made.fetch;
}

/** A fetch trusting the CAs of the PEM file at `path` besides Node's roots. @throws ConfigError naming VAULT_CACERT. */
function caFetch(path: string): FetchLike {
  let pem: string;
  try {
    pem = readFileSync(path, "utf8");
  } catch (err) {
    throw new ConfigError(`VAULT_CACERT ${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  if (!pem.includes("-----BEGIN CERTIFICATE-----")) throw new ConfigError(`VAULT_CACERT ${path} holds no PEM certificate`);
  const dispatcher = new Agent({ connect: { ca: [...rootCertificates, pem] } });
  // undici's RequestInit is the fetch standard's plus `dispatcher`; the client passes standard options only.
  return (input, init) => undiciFetch(input, Object.assign({}, init, { dispatcher }) as Parameters<typeof undiciFetch>[1]) as unknown as Promise<Response>;
}
