import type * as v from "valibot";
import type { AppContext } from "../../context.js";
import type { SecretLifecycle } from "../../../domain/secrets.js";
import type { Origin } from "../../../domain/events.js";
import { PastTtl } from "../../../domain/secret-model.js";
import type { Reader, SecretMeta } from "../../../domain/secret-model.js";
import type { PrincipalKeys } from "../../../domain/principal-keys.js";
import type { UnitOfWork, Work } from "../../../store/work.js";
import type { RoutePermission } from "../declare.js";
import type { RouteScope } from "../scope.js";
import { GLOBAL, ORG } from "../scope.js";
import { KEY_DOC } from "../secret-input.js";
import { metaJson, orgListEntry } from "../secret-json.js";
import { globalPage, globalRead, orgPage, orgRead } from "../secret-schemas.js";

/** What the secret routes need, built by app.ts. */
export interface SecretRouteDeps {
  secrets: SecretLifecycle;
  /** Principal keys, to check an org secret's `allowed_keys` at creation. */
  principalKeys: PrincipalKeys;
  tx: UnitOfWork<Work>;
  /** Base of public secrets' `url`, without a trailing slash; a function when known only once listening. */
  publicUrl: string | (() => string);
  /** The path under it that names a public secret: `/s/` (the recipient page) or `/secrets/` (the API, without the pages). */
  publicPath: string;
  maxValueBytes: number;
}

/**
 * The secret rules of one scope (docs/api.md "Global secrets", docs/orgs.md
 * "Org-scoped secrets"): one SecretLifecycle for both; global routes are
 * guarded by scoped-key permissions and prefixes (public secrets, no
 * sealing), org routes by role letters (allowed_keys, owners, sealing).
 */
export interface SecretScope {
  scope: RouteScope;
  /** The permission of each verb. */
  permission: Record<"create" | "list" | "read" | "patch" | "delete" | "prune", RoutePermission>;
  /** The `{key}` path parameter of GET, PATCH and DELETE (a global one may also be a public id). */
  keyDoc: string;
  /** Secrets that seal instead of burning (delete=false): lists include sealed ones, reads may answer 403/410, PATCH only such secrets. */
  sealable: boolean;
  /** A list entry and the schema of a page of them. */
  listEntry: (s: SecretMeta) => object;
  listSchema: v.GenericSchema;
  /** The schema of a read's answer. */
  readSchema: v.GenericSchema;
  /** The answer's name: `key`, or for a global secret `key | id`. */
  name: string;
}

/** The global key space. */
const GLOBAL_SECRETS: SecretScope = {
  scope: GLOBAL,
  permission: { create: "write", list: "admin", read: "read", patch: "write", delete: "delete", prune: "admin" },
  keyDoc: `${KEY_DOC}; or a public secret's id (64 lower-case hex characters)`,
  sealable: false,
  listEntry: metaJson,
  listSchema: globalPage,
  readSchema: globalRead,
  name: "key | id",
};

/** An organization's key space. */
const ORG_SECRETS: SecretScope = {
  scope: ORG,
  permission: { create: "org:c", list: "org:l", read: "org:r", patch: "org:P", delete: "org:d", prune: "org:C" },
  keyDoc: KEY_DOC,
  sealable: true,
  listEntry: orgListEntry,
  listSchema: orgPage,
  readSchema: orgRead,
  name: "key",
};

/** The secret rules of both scopes, global first. */
export const SECRET_SCOPES: readonly SecretScope[] = [GLOBAL_SECRETS, ORG_SECRETS];

/** `; or no such organization` for an org route's 404, else nothing. */
export function orNoOrg(s: SecretScope): string {
  return s.scope.missing[404] === undefined ? "" : "; or no such organization";
}

/** The reader for `allowed_keys`: the caller's principal key id, or null for every other token. */
export function readerOf(c: AppContext): Reader {
  const actor = c.get("actor");
  return { principalKeyId: actor.kind === "principal" ? actor.keyId : null };
}

/**
 * What a secret route (or the share page's reveal) does with a refusal of
 * its unit of work (VaultError, docs/architecture.md "How the domain
 * fails"): a secret refused because it is past its TTL (PastTtl) is expired
 * in a unit of its own first, so the expiry is recorded before the 404 is
 * answered. Any other error is handed back as it is.
 * @returns `err`, for the caller to throw.
 */
export async function afterRefusal(deps: Pick<SecretRouteDeps, "tx" | "secrets">, err: unknown, origin: Origin): Promise<unknown> {
  if (err instanceof PastTtl) await deps.tx.run((w) => deps.secrets.expireKey(w, err.scope, err.key, origin));
  return err;
}
