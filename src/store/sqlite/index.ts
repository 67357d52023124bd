import type { Db } from "./db.js";
import { AfterCommitQueue } from "../work.js";
import type { Work } from "../work.js";
import { createSqlStores } from "../sql/index.js";
import { SqliteAuditStore } from "./audit/store.js";
import { SqliteOutboxStore } from "./outbox.js";
import { SqliteSecretStore } from "./secrets.js";
import { SqliteExecutor } from "./executor.js";
import { ReadTally } from "./tally/index.js";

/**
 * The SQLite engine's work handle: every store over one connection, built
 * once (statements prepared once) and handed to every unit of work by the
 * group commit. Its own stores (secrets, audit, outbox) answer
 * synchronously, so engine code (the group commit's hooks) may call them
 * without awaiting; the engine-neutral ones (store/sql/) answer
 * synchronously too, through SqliteExecutor.
 */
export interface SqliteWork extends Work {
  readonly secrets: SqliteSecretStore;
  readonly audit: SqliteAuditStore;
  readonly outbox: SqliteOutboxStore;
  /** The write-behind read counts and audit heads (tally/read-tally.ts), shared by the secrets and audit stores. */
  readonly tally: ReadTally;
  /** Where afterCommit puts the running unit's callbacks; the group commit runs them (group-commit.ts). */
  readonly commits: AfterCommitQueue;
}

/**
 * Builds the SQLite stores over `db` (open and migrated).
 * @param options.auditChainKey the key audit rows are MACed with (the
 *   current root key's chain key); null: plain SHA-256, for tools that only read.
 */
export function createSqliteWork(db: Db, options: { auditChainKey: Buffer | null } = { auditChainKey: null }): SqliteWork {
  const tally = new ReadTally(db);
  const commits = new AfterCommitQueue();
  return Object.assign(createSqlStores(new SqliteExecutor(db)), {
    commits,
    afterCommit: (fn: () => void) => commits.add(fn),
    secrets: new SqliteSecretStore(db, tally),
    audit: new SqliteAuditStore(db, options.auditChainKey, tally),
    outbox: new SqliteOutboxStore(db),
    tally,
  });
}
