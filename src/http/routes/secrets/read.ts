import type { AppContext } from "../../context.js";
import { originOf } from "../../context.js";
import type { ResponseDecl, Route } from "../declare.js";
import { inScope } from "../scope.js";
import type { SecretRouteDeps, SecretScope } from "./secret-route.js";
import { afterRefusal, orNoOrg, readerOf, readJson, refusableOnce, secretKeyRoute } from "./secret-route.js";

/** Answers only sealable (org) secrets give: allowed_keys and sealing. */
const SEALABLE: Record<number, ResponseDecl> = {
  403: { description: "the token may not do this, or the key is not in the secret's allowed_keys" },
  410: { description: "sealed: its reads are exhausted" },
};

/**
 * HEAD of a secret (docs/api.md "Global secrets"): whether it exists and the
 * caller may read it, answered by the GET route below for a HEAD
 * request; no decryption, no read counted.
 * @throws VaultError 404, 403 (allowed_keys) or 410 (sealed), as a GET would
 *   (a secret past its TTL expired first: afterRefusal).
 */
async function headSecret(deps: SecretRouteDeps, s: SecretScope, c: AppContext, key: string): Promise<Response> {
  const origin = originOf(c);
  const reader = readerOf(c);
  try {
    await inScope(deps.tx, s.scope, c, (w, scope) => deps.secrets.check(w, scope, key, reader));
  } catch (err) {
    throw await afterRefusal(deps, err, origin);
  }
  return c.body(null, 200);
}

/**
 * GET of a secret (docs/api.md "Global secrets", docs/orgs.md "Org-scoped
 * secrets"): its value, counting the read; the read that reaches max_reads
 * burns it, or seals it (org, delete=false). A HEAD is answered by headSecret.
 */
export function readRoute(deps: SecretRouteDeps, s: SecretScope): Route {
  return secretKeyRoute(s, "get", {
    global:
      "Retrieve a secret's value and count the read. The read that reaches max_reads burns it. HEAD answers existence without counting a read.",
    org: "Retrieve an org secret's value and count the read; the read that reaches max_reads burns it (delete=true) or seals it (delete=false). HEAD answers existence without decrypting or counting.",
  }, {
    permission: s.permission.read,
    idempotent: true,
    // The GET records secret.read itself; a HEAD records this.
    auditAction: "secret.checked",
    responses: Object.assign(
      {
        200: {
          description: `{${s.name}, value, created_at, expires_at, max_reads, read_count}; read_count after this read`,
          schema: s.readSchema,
        },
        400: { description: "invalid secret key" },
        404: { description: `missing, expired or burned${orNoOrg(s)}` },
      },
      s.sealable ? SEALABLE : {},
    ),
    handler: async (c, { params }) => {
      if (c.req.method === "HEAD") return headSecret(deps, s, c, params.key);
      const origin = originOf(c);
      const reader = readerOf(c);
      return refusableOnce(
        deps,
        s,
        c,
        origin,
        (w, scope) => deps.secrets.retrieve(w, scope, params.key, reader, origin),
        (read) => [200, readJson(read.secret, read.value)],
      );
    },
  });
}
