import { randomBytes } from "node:crypto";
import type pg from "pg";
import type { AfterCommitQueue, Work } from "../work.js";
import { createSqlStores } from "../sql/index.js";
import type { AuditCheck, Engine } from "../engine.js";
import { verifyPgAuditChainsFrom } from "./audit/verify.js";
import type { PgChainStates } from "./audit/verify.js";
import { verifyPgRootKeys } from "./root-keys.js";
import { PgAuditStore } from "./audit/store.js";
import type { WriterChain } from "./audit/store.js";
import { PgExecutor } from "./executor.js";
import { PgOutboxStore } from "./outbox.js";
import { migratePg } from "./migrate.js";
import { openPgPool } from "./pool.js";
import { PgGroupCommit, PgUnitOfWork, PrefetchingWebhookStore, withoutPreparedStatements } from "./batch/index.js";
import type { PgUnits, Queryable, WriteBehind } from "./batch/index.js";
import { PgSecretStore } from "./secrets.js";

/**
 * The PostgreSQL engine of one vault node (store/engine.ts Engine): its
 * pool, its units of work (batched by the group commit, store/pg/batch/group-commit.ts,
 * or a transaction each on a pooled client), one audit chain per pooled client.
 */
export interface PgEngine extends Engine {
  readonly kind: "pg";
  readonly pool: pg.Pool;
  readonly tx: PgUnits<Work>;
  /** This node's id: the prefix of its audit chains' names. */
  readonly nodeId: string;
}

/**
 * The work handle over one client: every PostgreSQL store, built per unit of
 * work (cheap objects; the hot-path statements are prepared, store/pg/batch/prepared.ts).
 * A counted read or a create reads its webhook subscribers ahead, pipelined
 * before its own statement: its `webhooks` is a PrefetchingWebhookStore
 * (store/pg/batch/prefetch.ts).
 * @param client what the stores run their statements on (the pooled client,
 *   or its withoutPreparedStatements() view).
 * @param chain the audit chain this client writes (one per pooled client).
 * @param auditChainKey the key audit rows are MACed with; null: plain SHA-256.
 * @param auditChainKeys every loaded root key's chain key (the set of chains, store/pg/audit/chain-set.ts).
 * @param behind the unit's write-behind statements (store/pg/batch/write-behind.ts); absent: every statement is awaited.
 * @param commits where the handle's afterCommit puts its callbacks (the unit of work runs them
 *   after its COMMIT); absent: afterCommit throws (no unit of work runs this handle).
 */
export function createPgWork(
  client: Queryable,
  chain: WriterChain,
  auditChainKey: Buffer | null,
  auditChainKeys?: readonly Buffer[],
  behind?: WriteBehind,
  commits?: AfterCommitQueue,
): Work {
  const stores = createSqlStores(new PgExecutor(client, behind));
  const webhooks = new PrefetchingWebhookStore(stores.webhooks, behind);
  const work: Work = Object.assign(stores, {
    webhooks,
    secrets: new PgSecretStore(client, (scope) => webhooks.prefetch(scope), behind),
    audit: new PgAuditStore(client, chain, auditChainKey, auditChainKeys, behind),
    outbox: new PgOutboxStore(client),
    afterCommit: (fn: () => void) => {
      if (commits === undefined) throw new Error("afterCommit is called outside a unit of work");
      commits.add(fn);
    },
  });
  return work;
}

/** What the engine keeps per pooled client: its audit chain and what its stores query through. */
interface ClientState {
  chain: WriterChain;
  queryable: Queryable;
}

/** How a PostgreSQL engine runs over its pool (pgEngineOver, openPgEngine). */
export interface PgEngineOptions {
  auditChainKey: Buffer | null;
  /** Every loaded root key's chain key (the set of chains may be signed under an older one); default: auditChainKey alone. */
  auditChainKeys?: readonly Buffer[];
  nodeId?: string;
  /** Default true; false behind a transaction-mode pooler (VAULT_DATABASE_PREPARED_STATEMENTS). */
  preparedStatements?: boolean;
  /** Batch the units of one event-loop turn in one transaction (VAULT_DATABASE_GROUP_COMMIT; default true). */
  groupCommit?: boolean;
  /** VAULT_DATABASE_RETRY_MS: how long a unit that failed before its COMMIT runs again, milliseconds (PgUnitOfWork). */
  retryMs?: number;
  /** Told when a unit is first held to run again (the driver's error): a log line. */
  onRetry?: (err: unknown) => void;
}

/**
 * Opens the engine over an existing pool (already migrated): each pooled
 * client gets an audit chain of its own, `<nodeId>/<n>`, so audited
 * requests on different clients and nodes never wait on one chain.
 * @param options.preparedStatements default true; false: the hot-path statements go out
 *   unnamed (VAULT_DATABASE_PREPARED_STATEMENTS, store/pg/batch/prepared.ts).
 * @param options.groupCommit default true: the units of one event-loop turn share a
 *   transaction (VAULT_DATABASE_GROUP_COMMIT, store/pg/batch/group-commit.ts); false: one transaction per unit.
 */
export function pgEngineOver(
  pool: pg.Pool,
  options: PgEngineOptions,
): PgEngine {
  const nodeId = options.nodeId ?? randomBytes(4).toString("hex");
  const prepared = options.preparedStatements ?? true;
  const clients = new WeakMap<Queryable, ClientState>();
  let next = 0;
  const stateOf = (client: Queryable): ClientState => {
    let state = clients.get(client);
    if (state === undefined) {
      state = {
        chain: { name: `${nodeId}/${next++}`, head: undefined },
        queryable: prepared ? client : withoutPreparedStatements(client),
      };
      clients.set(client, state);
    }
    return state;
  };
  const single = new PgUnitOfWork<Work>(
    pool,
    (client, { behind, view, commits }) => {
      const state = stateOf(client);
      return createPgWork(view === undefined ? state.queryable : view(state.queryable), state.chain, options.auditChainKey, options.auditChainKeys, behind, commits);
    },
    {
      // A rolled-back unit's rows never happened: read the head back next time.
      onRollback: (client) => {
        const state = clients.get(client);
        if (state !== undefined) state.chain.head = undefined;
      },
      retryMs: options.retryMs,
      onRetry: options.onRetry,
    },
  );
  const tx: PgUnits<Work> = options.groupCommit !== false ? new PgGroupCommit(single) : single;
  // How far the console's check verified each chain (verifyAudit): only what this node walked, never a break.
  let verified: PgChainStates = new Map();
  return {
    kind: "pg",
    label: "PostgreSQL",
    pool,
    tx,
    nodeId,
    migrate: async () => {
      await migratePg(pool);
    },
    verifyRootKeys: (cipher) => verifyPgRootKeys(tx, cipher),
    // Each pooled client's chain opens itself at its first audited unit (store/pg/audit/store.ts).
    openAuditChain: () => true,
    // The console's check (docs/console.md, "Audit"): each chain from the state this node verified last; a break is not cached.
    verifyAudit: async (keys): Promise<AuditCheck> => {
      const { report, states } = await verifyPgAuditChainsFrom(pool, keys, verified);
      verified = states;
      return report.ok
        ? { ok: true, rows: report.rows, walked: report.walked }
        : { ok: false, rows: report.rows, walked: report.walked, at: `${report.chain}#${report.seq}`, reason: report.reason };
    },
    // Several nodes write: nothing read from the database is cached between units.
    hooks: { singleWriter: false },
    close: async () => {
      tx.close();
      await pool.end();
    },
  };
}

/**
 * Connects to VAULT_DATABASE_URL, migrates the schema (store/pg/migrate.ts:
 * one node at a time) and opens the engine.
 * @param options.url postgres:// URL; `sslmode` and the other options are honoured.
 * @param options.poolSize most connections (VAULT_DATABASE_POOL_SIZE).
 * @param options.preparedStatements default true; false behind a transaction-mode pooler
 *   (VAULT_DATABASE_PREPARED_STATEMENTS).
 * @param options.groupCommit batch the units of one event-loop turn in one transaction
 *   (VAULT_DATABASE_GROUP_COMMIT; default true).
 * @throws Error naming the redacted URL when the database cannot be reached,
 *   or the migration's error.
 */
export async function openPgEngine(options: PgEngineOptions & { url: string; poolSize: number }): Promise<PgEngine> {
  const pool = await openPgPool(options);
  try {
    await migratePg(pool);
  } catch (err) {
    await pool.end().catch(() => {});
    throw err;
  }
  return pgEngineOver(pool, options);
}
