import type { Db } from "../../db.js";
import type { Work } from "../work.js";
import { SqliteAuditStore } from "./audit.js";
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
  readonly webhooks: SqliteWebhookStore;
  readonly outbox: SqliteOutboxStore;
}

/** Builds the SQLite stores over `db` (open and migrated). */
export function createSqliteWork(db: Db): SqliteWork {
  return {
    secrets: new SqliteSecretStore(db),
    audit: new SqliteAuditStore(db),
    webhooks: new SqliteWebhookStore(db),
    outbox: new SqliteOutboxStore(db),
  };
}
