import { AnswerTimeoutError, VaultApiError, VaultConnectionError, VaultInputError, VaultProtocolError } from "./errors.js";

/** Exit code when the API refused a request (docs/cli.md "Exit codes and errors"). */
export const EXIT_REFUSED = 1;
/** Exit code when the vault cannot be reached, or what answers is not a vault (docs/cli.md). */
export const EXIT_UNREACHABLE = 2;
/**
 * Exit code when nobody answered a request in time (`request wait`'s
 * `--timeout`): the code of any other answer that did not come in time (docs/cli.md).
 */
export const EXIT_NOT_ANSWERED = 2;
/** Exit code of a usage error: a key or id the client refuses to send (docs/cli.md). */
export const EXIT_USAGE = 2;

/** Who shows the message: the command line, or the MCP server (its hints name tools, not commands). */
export type FailureAudience = "cli" | "mcp";

/** A request that lists secrets: `GET /secrets` or `GET /orgs/{org}/secrets`, without a key. */
function isListing(request: string): "global" | "org" | undefined {
  const path = request.replace(/\?.*$/, "");
  if (path === "GET /secrets") return "global";
  if (/^GET \/orgs\/[^/]+\/secrets$/.test(path)) return "org";
  return undefined;
}

/** What to say after a 403 on listing: the permission it needs and what to do instead (docs/keys.md, docs/orgs.md). */
function listingHint(scope: "global" | "org", audience: FailureAudience): string {
  const needs = scope === "global" ? "listing secrets needs a key with the admin permission" : "listing an org's secrets needs the l letter in the principal's role";
  const instead = audience === "mcp" ? "read each secret by its key with get_secret" : "name the secrets instead: get KEY, or run --env NAME=KEY";
  return `; ${needs}: ${instead}`;
}

/**
 * The one-line message for a failed client call, and its exit code:
 * - a refusal (VaultApiError), exit 1: `<error> (<status>)`, then `: <the
 *   API's message>` when the body has one (the size limit of a 413, how to
 *   lift a 402, how to reactivate a 410), `; retry after N s` with a
 *   Retry-After header (429, 503), and for a 403 on listing the permission it
 *   needs and what to use instead;
 * - not a vault (VaultProtocolError), exit 2: `the server at ADDR is not an
 *   ephemeral-vault (HTTP 404, text/html)`;
 * - unreachable or timed out (VaultConnectionError), exit 2: `vault not
 *   reachable at ADDR (<reason>)`; a TLS certificate not trusted adds how to
 *   trust its CA (VAULT_CACERT);
 * - a key or id the client refused to send (VaultInputError), exit 2;
 * - nobody answered a request in time (AnswerTimeoutError), exit 2.
 * Shared by the command line and the MCP server (docs/cli.md, docs/mcp.md,
 * docs/client.md "Errors"). Never holds a secret value or a token.
 * @param audience `mcp` makes the hints name MCP tools instead of commands.
 * @returns null for any other error (a bug: the caller rethrows it).
 */
export function describeFailure(err: unknown, audience: FailureAudience = "cli"): { message: string; code: number } | null {
  if (err instanceof VaultApiError) {
    let message = `${err.error} (${err.status})`;
    if (err.detail !== undefined && err.detail !== err.error) message += `: ${err.detail}`;
    if (err.retryAfter !== undefined) message += `; retry after ${err.retryAfter} s`;
    const listing = err.status === 403 ? isListing(err.request) : undefined;
    if (listing !== undefined) message += listingHint(listing, audience);
    return { message, code: EXIT_REFUSED };
  }
  if (err instanceof VaultProtocolError) return { message: err.message, code: EXIT_UNREACHABLE };
  if (err instanceof VaultInputError) return { message: err.message, code: EXIT_USAGE };
  if (err instanceof VaultConnectionError) {
    // The CLI and the MCP server read VAULT_CACERT (docs/cli.md, "Connecting").
    const hint = err.untrustedCertificate ? "; to trust the CA that signed it, set VAULT_CACERT to its PEM file" : "";
    return { message: err.message + hint, code: EXIT_UNREACHABLE };
  }
  if (err instanceof AnswerTimeoutError) return { message: err.message, code: EXIT_NOT_ANSWERED };
  return null;
}
