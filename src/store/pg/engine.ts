import { randomBytes } from "node:crypto";
import type pg from "pg";
import type { Work } from "../work.js";
import { createSqlStores } from "../sql/index.js";
import type { AuditCheck, Engine } from "../engine.js";
import { verifyPgAuditChains } from "./audit-verify.js";
import { verifyPgRootKeys } from "./root-keys.js";
import { PgAuditStore } from "./audit.js";
import type { WriterChain } from "./audit.js";
import { PgExecutor } from "./executor.js";
import { PgOutboxStore } from "./outbox.js";
import { migratePg } from "./migrate.js";
import { openPgPool } from "./pool.js";
import { withoutPreparedStatements } from "./prepared.js";
import { PgSecretStore } from "./secrets.js";
import type { Queryable } from "./unit-of-work.js";
import { PgUnitOfWork } from "./unit-of-work.js";

/**
 * The PostgreSQL engine of one vault node (store/engine.ts Engine): its
 * pool, its unit of work (a transaction per unit on a pooled client), one
 * audit chain per pooled client.
 */
export interface PgEngine extends Engine {
  readonly kind: "pg";
  readonly pool: pg.Pool;
  readonly tx: PgUnitOfWork<Work>;
  /** This node's id: the prefix of its audit chains' names. */
  readonly nodeId: string;
}

/**
 * The work handle over one client: every PostgreSQL store, built per unit of
 * work (cheap objects; the hot-path statements are prepared, store/pg/prepared.ts).
 * @param client what the stores run their statements on (the pooled client,
 *   or its withoutPreparedStatements() view).
 * @param chain the audit chain this client writes (one per pooled client).
 * @param auditChainKey the key audit rows are MACed with; null: plain SHA-256.
 * @param auditChainKeys every loaded root key's chain key (the set of chains, store/pg/audit-chain-set.ts).
 */
export function createPgWork(client: Queryable, chain: WriterChain, auditChainKey: Buffer | null, auditChainKeys?: readonly Buffer[]): Work {
  return Object.assign(createSqlStores(new PgExecutor(client)), {
    secrets: new PgSecretStore(client),
    audit: new PgAuditStore(client, chain, auditChainKey, auditChainKeys),
    outbox: new PgOutboxStore(client),
  });
}

/** What the engine keeps per pooled client: its audit chain and what its stores query through. */
interface ClientState {
  chain: WriterChain;
  queryable: Queryable;
}

/**
 * Opens the engine over an existing pool (already migrated): each pooled
 * client gets an audit chain of its own, `<nodeId>/<n>`, so audited
 * requests on different clients and nodes never wait on one chain.
 * @param options.preparedStatements default true; false: the hot-path statements go out
 *   unnamed (VAULT_DATABASE_PREPARED_STATEMENTS, store/pg/prepared.ts).
 */
export function pgEngineOver(
  pool: pg.Pool,
  options: { auditChainKey: Buffer | null; auditChainKeys?: readonly Buffer[]; nodeId?: string; preparedStatements?: boolean },
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
  const tx = new PgUnitOfWork<Work>(
    pool,
    (client) => {
      const state = stateOf(client);
      return createPgWork(state.queryable, state.chain, options.auditChainKey, options.auditChainKeys);
    },
    {
      // A rolled-back unit's rows never happened: read the head back next time.
      onRollback: (client) => {
        const state = clients.get(client);
        if (state !== undefined) state.chain.head = undefined;
      },
    },
  );
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
    // Each pooled client's chain opens itself at its first audited unit (audit.ts).
    openAuditChain: () => true,
    verifyAudit: async (keys): Promise<AuditCheck> => {
      const report = await verifyPgAuditChains(pool, keys);
      return report.ok ? { ok: true, rows: report.rows } : { ok: false, rows: report.rows, at: `${report.chain}#${report.seq}`, reason: report.reason };
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
 * @throws Error naming the redacted URL when the database cannot be reached,
 *   or the migration's error.
 */
export async function openPgEngine(options: {
  url: string;
  poolSize: number;
  auditChainKey: Buffer | null;
  /** Every loaded root key's chain key (the set of chains may be signed under an older one); default: auditChainKey alone. */
  auditChainKeys?: readonly Buffer[];
  nodeId?: string;
  preparedStatements?: boolean;
}): Promise<PgEngine> {
  const pool = await openPgPool(options);
  try {
    await migratePg(pool);
  } catch (err) {
    await pool.end().catch(() => {});
    throw err;
  }
  return pgEngineOver(pool, options);
}
