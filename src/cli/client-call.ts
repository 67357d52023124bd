import { VaultApiError, VaultClient, VaultConnectionError, VaultInputError } from "../client/index.js";
import { argvWarning, resolveConnection } from "./connection.js";
import type { Connection, ConnectionFlags } from "./connection.js";
import type { ExitCode } from "./registry.js";

/** Exit code when the API refused a request (issue table). */
export const EXIT_REFUSED = 1;
/** Exit code when the vault cannot be reached (issue table). */
export const EXIT_UNREACHABLE = 2;
/** Exit code of a usage error: a key or id the client refuses to send (docs/cli.md). */
export const EXIT_USAGE = 2;

/** The typed client for a resolved connection. */
export function clientFor(connection: Connection): VaultClient {
  return new VaultClient({ addr: connection.addr, token: connection.token, org: connection.org ?? null });
}

/**
 * The one-line message for a failed client call, and its exit code:
 * `<API error> (<status>)` with 1 for a refusal, `vault not reachable at ADDR
 * (<reason>)` with 2 when it is not reachable, and the client's own message
 * with 2 (a usage error) for a key or id it refused to send (VaultInputError).
 * @returns null for any other error (a bug: the caller rethrows it).
 */
export function describeFailure(err: unknown): { message: string; code: number } | null {
  if (err instanceof VaultApiError) return { message: `${err.error} (${err.status})`, code: EXIT_REFUSED };
  if (err instanceof VaultInputError) return { message: err.message, code: EXIT_USAGE };
  if (err instanceof VaultConnectionError) return { message: err.message, code: EXIT_UNREACHABLE };
  return null;
}

/**
 * Resolves the connection from the flags and environment, runs `work` with a
 * client, and turns an API refusal, an unreachable vault or a refused key
 * into one line on stderr (`ephemeral-vault: secret not found (404)`) and
 * exit code 1 or 2 (describeFailure()).
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
    process.stderr.write(`ephemeral-vault: ${failure.message}\n`);
    exit.code = failure.code;
  }
}
