import { describeFailure, VaultClient, VaultConnectionError, VaultProtocolError } from "@ephemeral-vault/client";
import { argvWarning, resolveConnection } from "./connection.js";
import type { Connection, ConnectionFlags } from "./connection.js";
import type { ExitCode } from "../exit-codes.js";
import { cliFetch } from "./ca-fetch.js";

/** The typed client for a resolved connection (its address, token, org and time limit). */
export function clientFor(connection: Connection): VaultClient {
  return new VaultClient({ fetch: cliFetch(), addr: connection.addr, token: connection.token, org: connection.org ?? null, timeoutMs: connection.timeoutMs });
}

/**
 * Resolves the connection from the flags and environment, runs `work` with a
 * client, and turns an API refusal, an unreachable vault, a server that is
 * not a vault or a refused key into one line on stderr
 * (`ephemeral-vault: secret not found (404)`) and exit code 1 or 2
 * (describeFailure()). When the address came from a local vault's address
 * file and nothing answers there, the line says that the file may be stale.
 * @throws ConfigError for a usage problem (no token, bad address): exit 2.
 */
export async function callVault(
  flags: ConnectionFlags,
  exit: ExitCode,
  work: (client: VaultClient, connection: Connection) => Promise<void>,
): Promise<void> {
  const connection = resolveConnection(flags);
  if (flags.token !== undefined) process.stderr.write(argvWarning("--token"));
  try {
    await work(clientFor(connection), connection);
  } catch (err) {
    const failure = describeFailure(err);
    if (failure === null) throw err;
    let message = failure.message;
    if (connection.addrFile !== undefined && (err instanceof VaultConnectionError || err instanceof VaultProtocolError)) {
      message += `; the address comes from ${connection.addrFile}, written by a local vault that is not running there any more (start it, or set VAULT_ADDR)`;
    }
    process.stderr.write(`ephemeral-vault: ${message}\n`);
    exit.code = failure.code;
  }
}
