import type { Db } from "./db.js";
import type { Work } from "../work.js";
import { SqliteAuditStore } from "./audit.js";
import { SqliteMetaStore } from "./meta.js";
import { SqliteOrgStore, SqlitePrincipalKeyStore, SqlitePrincipalStore, SqliteRoleStore } from "./orgs.js";
import { SqliteScopedKeyStore } from "./scoped-keys.js";
import { SqliteOutboxStore } from "./outbox.js";
import { SqliteSecretStore } from "./secrets.js";
import { SqliteWebhookStore } from "./webhooks.js";

/**
 * The SQLite engine's work handle: every store over one connection, built
 * once (statements prepared once) and handed to every unit of work by the
 * group commit. Its stores answer synchronously, so engine code (the group
 * commit's hooks) may call them without awaiting.
 */
export interface SqliteWork extends Work {
  readonly secrets: SqliteSecretStore;
  readonly audit: SqliteAuditStore;
  readonly meta: SqliteMetaStore;
  readonly scopedKeys: SqliteScopedKeyStore;
  readonly orgs: SqliteOrgStore;
  readonly roles: SqliteRoleStore;
  readonly principals: SqlitePrincipalStore;
  readonly principalKeys: SqlitePrincipalKeyStore;
  readonly webhooks: SqliteWebhookStore;
  readonly outbox: SqliteOutboxStore;
}

/**
 * Builds the SQLite stores over `db` (open and migrated).
 * @param options.auditChainKey the key audit rows are MACed with (the
 *   current root key's chain key); null: plain SHA-256, for tools that only read.
 */
export function createSqliteWork(db: Db, options: { auditChainKey: Buffer | null } = { auditChainKey: null }): SqliteWork {
  return {
    secrets: new SqliteSecretStore(db),
    audit: new SqliteAuditStore(db, options.auditChainKey),
    meta: new SqliteMetaStore(db),
    scopedKeys: new SqliteScopedKeyStore(db),
    orgs: new SqliteOrgStore(db),
    roles: new SqliteRoleStore(db),
    principals: new SqlitePrincipalStore(db),
    principalKeys: new SqlitePrincipalKeyStore(db),
    webhooks: new SqliteWebhookStore(db),
    outbox: new SqliteOutboxStore(db),
  };
}
