import { VaultApiError } from "@ephemeral-vault/client";
import type { VaultClient } from "@ephemeral-vault/client";

/** What the server's token may do, as far as the start-up probes could tell (docs/mcp.md, "Which tools are offered"). */
export interface Capabilities {
  /** GET/HEAD of a secret (`read`; org: `r`). */
  read: boolean;
  /** Creating a keyed secret (`write`; org: `c`). */
  create: boolean;
  /** PATCH of a secret (`write`; org: `P`). */
  patch: boolean;
  /** DELETE of a secret (`delete`; org: `d`). */
  delete: boolean;
  /** Listing (`admin`; org: `l`). */
  list: boolean;
  /** Public dead drops: global `write` without a prefix (never a principal key). */
  share: boolean;
  /** Requests, "ask for a secret" (POST /requests; org: `c`): request_secret (docs/requests.md). */
  request: boolean;
  /** One line per capability the token lacks, with the vault's reason (no token, no value). */
  refusals: string[];
  /** Why the probes could not tell: the token refused (401), the vault unreachable or failing; undefined when they could. */
  problem?: string | undefined;
}

/** A key no secret can have (outside the key alphabet): every probe is refused, so nothing is read or changed. */
const PROBE_KEY = "!probe";
/** A public secret id (64 hex) that a random id never is. */
const PROBE_PUBLIC_ID = "0".repeat(64);

/**
 * Finds out what the token may do without reading or changing anything
 * (docs/mcp.md): one request per capability that the vault refuses in any
 * case, read for its status. The vault checks the token's permission before
 * the prefix and before the input (docs/keys.md, docs/orgs.md), so a 403 that
 * is not about the prefix means the permission is missing, and a 400 or 404
 * (the probe key `!probe` is invalid) means it is there. A prefix-scoped key
 * answers 403 "within its prefix" to the probe key, which still means it
 * holds the permission. Sharing is probed by a PATCH of a public id on the
 * global secrets with an empty body: a 403 of whatever kind (no `write`, a prefix, a
 * principal key) means `share_secret` would fail. Requests are probed by a
 * POST /requests (of the server's scope) with an empty description, which
 * the vault refuses (400) after the permission (403). When a probe cannot tell
 * (401, 5xx, vault not reachable), the capability counts as present, so the
 * tool is offered and reports the problem when called (and `problem` says
 * why, for the start-up line on stderr); after a first probe
 * that cannot tell, no other is sent (a wrong token costs one failed
 * authentication, not six).
 * @param client the client of the server's scope (global or `--org`).
 * @param globalClient the same address and token on the global secrets.
 */
export async function probeCapabilities(client: VaultClient, globalClient: VaultClient): Promise<Capabilities> {
  const refusals: string[] = [];
  let problem: string | undefined;
  /** true/false when the vault told; undefined when it could not (401, not reachable, 5xx). */
  const check = async (what: string, call: () => Promise<unknown>, prefixCounts: boolean): Promise<boolean | undefined> => {
    try {
      await call();
      return true;
    } catch (err) {
      if (!(err instanceof VaultApiError)) {
        problem = `cannot reach the vault at ${client.addr}: ${err instanceof Error ? err.message : String(err)}`;
        return undefined;
      }
      if (err.status === 401) {
        problem = `the vault at ${client.addr} refused the token (401 ${err.error}): set VAULT_TOKEN (or --token-file) to a valid key`;
        return undefined;
      }
      if (err.status >= 500) {
        problem = `the vault at ${client.addr} answered ${err.status} ${err.error}`;
        return undefined;
      }
      if (err.status !== 403) return true;
      if (prefixCounts && /within its prefix/.test(err.error)) return true;
      refusals.push(`${what}: ${err.error} (403)`);
      return false;
    }
  };
  // One probe first: a token the vault does not know (401) is not tried again and again.
  const read = await check("read", () => client.get(PROBE_KEY), true);
  if (read === undefined) return { read: true, create: true, patch: true, delete: true, list: true, share: true, request: true, refusals, problem };
  const [create, patch, del, list, share, request] = (
    await Promise.all([
      check("create", () => client.put(PROBE_KEY, ""), true),
      check("patch", () => client.patch(PROBE_KEY, {}), true),
      check("delete", () => client.delete(PROBE_KEY), true),
      check("list", () => client.list({ limit: 0 }), true),
      check("share", () => globalClient.patch(PROBE_PUBLIC_ID, {}), false),
      check("ask for secrets", () => client.request({ description: "" }), false),
    ])
  ).map((known) => known !== false);
  return {
    read,
    create: create === true,
    patch: patch === true,
    delete: del === true,
    list: list === true,
    share: share === true,
    request: request === true,
    refusals,
  };
}
