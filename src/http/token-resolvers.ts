import type { ScopedKeys } from "../domain/keys.js";
import type { PrincipalKeys } from "../domain/orgs/principal-keys.js";
import type { Logger } from "../log/log.js";
import type { UnitOfWork, Work } from "../store/work.js";
import { SecretMatcher } from "../crypto/tokens.js";
import type { TokenResolver } from "./auth.js";

/**
 * The token resolvers besides the master key, tried in order by auth.ts
 * bearerActor() (docs/keys.md, docs/orgs.md "Principal keys",
 * docs/operations.md "Metrics"): each answers the actor of a token of its
 * kind, undefined for any other token.
 */

/**
 * The TokenResolver of VAULT_METRICS_TOKEN: the token (compared in constant
 * time) is a `metrics` actor, which may read GET /metrics and nothing else.
 */
export function metricsTokenResolver(metricsToken: string): TokenResolver {
  const matcher = new SecretMatcher(metricsToken);
  return (token) => (matcher.matches(token) ? { kind: "metrics" } : undefined);
}

/**
 * The TokenResolver of `vsk_` tokens (docs/keys.md): looks the token up by
 * its SHA-256 and answers the scoped actor. Writes last_used_at through the
 * unit of work at most once a minute per key, so a busy key costs no write
 * per request; a failed write is logged and does not fail the request.
 * @throws VaultError "unauthorized" (401 `token expired`) for a key past its
 *   expires_at (ScopedKeys.lookup; docs/keys.md "Expiry and revocation").
 */
export function scopedKeyResolver(keys: ScopedKeys, tx: UnitOfWork<Work>, log: Logger): TokenResolver {
  return async (token) => {
    if (!token.startsWith("vsk_")) return undefined;
    const key = await tx.run((w) => keys.lookup(w, token));
    if (key === undefined) return undefined;
    if (keys.touchDue(key)) {
      tx.run((w) => keys.touch(w, key.id)).catch((err: unknown) => log.warn({ err, key_id: key.id }, "last_used_at not written"));
    }
    return { kind: "scoped", keyId: key.id, permissions: key.permissions, prefix: key.prefix };
  };
}

/**
 * The TokenResolver of principal keys (`vpk_` tokens, docs/orgs.md
 * "Principal keys"): looks the token up by its SHA-256 and resolves its
 * role's letters now, in a unit of work of its own (committed rows only), so
 * a role change or a revocation applies to the next request.
 * @returns the principal actor, or undefined for a token that is not a
 *   known principal key (auth.ts answers 401).
 * @throws VaultError "unauthorized" (401) for a key used before valid_after
 *   or after valid_before (PrincipalKeys.lookup).
 */
export function principalKeyResolver(keys: PrincipalKeys, tx: UnitOfWork<Work>): TokenResolver {
  return async (token) => {
    if (!token.startsWith("vpk_")) return undefined;
    const found = await tx.run((w) => keys.lookup(w, token));
    if (found === undefined) return undefined;
    return {
      kind: "principal",
      keyId: found.keyId,
      principalId: found.principalId,
      orgId: found.orgId,
      role: found.role,
      letters: found.letters,
    };
  };
}
