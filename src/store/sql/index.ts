import type { Work } from "../work.js";
import type { SqlExecutor } from "./executor.js";
import { SqlMetaStore } from "./meta.js";
import { SqlOrgStore, SqlRoleStore } from "./orgs.js";
import { SqlRevealCheckStore } from "./reveal-checks.js";
import { SqlFileMetaStore } from "./file-metas.js";
import { SqlRequestStore } from "./requests.js";
import { SqlReceiptStore } from "./receipts.js";
import { SqlIdentityStore } from "./identities.js";
import { SqlIdempotencyStore } from "./idempotency.js";
import { SqlPrincipalKeyStore, SqlPrincipalStore } from "./principals.js";
import { SqlScopedKeyStore } from "./scoped-keys.js";
import { SqlWebhookStore } from "./webhooks.js";

/** The stores whose SQL is written once (store/sql/), as a work handle holds them. */
export type SqlStores = Pick<Work, "meta" | "scopedKeys" | "orgs" | "roles" | "principals" | "principalKeys" | "webhooks" | "revealChecks" | "fileMetas" | "requests" | "receipts" | "identities" | "idempotency">;

/**
 * The engine-neutral stores over one executor: SQLite's (built once per
 * database) or PostgreSQL's (built per unit of work over its client).
 */
export function createSqlStores(x: SqlExecutor): SqlStores {
  return {
    meta: new SqlMetaStore(x),
    scopedKeys: new SqlScopedKeyStore(x),
    orgs: new SqlOrgStore(x),
    roles: new SqlRoleStore(x),
    principals: new SqlPrincipalStore(x),
    principalKeys: new SqlPrincipalKeyStore(x),
    webhooks: new SqlWebhookStore(x),
    revealChecks: new SqlRevealCheckStore(x),
    fileMetas: new SqlFileMetaStore(x),
    requests: new SqlRequestStore(x),
    receipts: new SqlReceiptStore(x),
    identities: new SqlIdentityStore(x),
    idempotency: new SqlIdempotencyStore(x),
  };
}
