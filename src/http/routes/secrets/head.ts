import type { AppContext } from "../../context.js";
import { originOf } from "../../context.js";
import { inScope } from "../scope.js";
import type { SecretRouteDeps, SecretScope } from "./rules.js";
import { readerOf, refuse } from "./rules.js";

/**
 * HEAD of a secret (docs/api.md "Global secrets"): whether it exists and the
 * caller may read it, answered by the GET route (read.ts) for a HEAD
 * request; no decryption, no read counted.
 * @throws ApiError 404, 403 (allowed_keys) or 410 (sealed), as a GET would.
 */
export async function headSecret(deps: SecretRouteDeps, s: SecretScope, c: AppContext, key: string): Promise<Response> {
  const origin = originOf(c);
  const reader = readerOf(c);
  const checked = await inScope(deps.tx, s.scope, c, (w, scope) => deps.secrets.check(w, scope, key, reader, origin));
  if (checked.kind !== "ok") refuse(checked);
  return c.body(null, 200);
}
