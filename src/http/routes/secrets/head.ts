import type { AppContext } from "../../context.js";
import { originOf } from "../../context.js";
import { inScope } from "../scope.js";
import type { SecretRouteDeps, SecretScope } from "./rules.js";
import { afterRefusal, readerOf } from "./rules.js";

/**
 * HEAD of a secret (docs/api.md "Global secrets"): whether it exists and the
 * caller may read it, answered by the GET route (read.ts) for a HEAD
 * request; no decryption, no read counted.
 * @throws VaultError 404, 403 (allowed_keys) or 410 (sealed), as a GET would
 *   (a secret past its TTL expired first: afterRefusal).
 */
export async function headSecret(deps: SecretRouteDeps, s: SecretScope, c: AppContext, key: string): Promise<Response> {
  const origin = originOf(c);
  const reader = readerOf(c);
  try {
    await inScope(deps.tx, s.scope, c, (w, scope) => deps.secrets.check(w, scope, key, reader));
  } catch (err) {
    throw await afterRefusal(deps, err, origin);
  }
  return c.body(null, 200);
}
