import { GENESIS_HASH, rowHash } from "../../../model/audit/chain.js";
import { headMac } from "../../../model/audit/head.js";
import { recordNewChain } from "./chain-set.js";
import type { AuditInsert, AuditPageQuery, AuditRow, AuditStore } from "../../audit.js";
import { prepared, runPrepared } from "../batch/index.js";
import type { Queryable, WriteBehind } from "../batch/index.js";

// The row and the chain's head in one statement (one round trip): every audited request runs it (prepared.ts).
const APPEND = prepared(
  "audit.append",
  `WITH row AS (
     INSERT INTO audit (scope, at, action, key, actor, principal_id, ip, count, chain, seq, hash)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
   )
   UPDATE audit_chains SET seq = $10, hash = $11, at = $2, mac = $12 WHERE chain = $9`,
);

/**
 * One page of the audit log, newest first: $1 scope, $2/$3 since/until (ms,
 * or NULL), $4 the cursor (rows below this id, or NULL), $5 action, $6 key,
 * $7 key prefix (each NULL: no filter), $8 the limit. Exported for the plan
 * tests.
 */
export const AUDIT_PAGE_SQL = `SELECT id, scope, at, action, key, actor, principal_id, ip, count, hash FROM audit
  WHERE scope = $1
    AND ($2::bigint IS NULL OR at >= $2) AND ($3::bigint IS NULL OR at < $3) AND ($4::bigint IS NULL OR id < $4)
    AND ($5::text IS NULL OR action = $5) AND ($6::text IS NULL OR key = $6)
    AND ($7::text IS NULL OR starts_with(key, $7))
  ORDER BY id DESC LIMIT $8`;

/**
 * Sorts off around AUDIT_PAGE_SQL, in its transaction only (SET LOCAL; the
 * reset puts back the server's setting for the statements after it): the
 * page is read from an index in id order whatever the statistics say
 * (PgAuditStore.page).
 */
export const AUDIT_PAGE_HINT = { on: "SET LOCAL enable_sort = off", off: "SET LOCAL enable_sort TO DEFAULT" } as const;

/** A chain's head as `audit_chains` keeps it: its last position, hash and time (ms). */
export interface ChainHead {
  seq: number;
  hash: string;
  at: number;
}

/**
 * One writer's chain: its name and its head as last committed by this
 * writer (undefined: read it from audit_chains, under a row lock). The
 * engine keeps one per pooled client and forgets `head` when a unit of work
 * on that client rolls back.
 */
export interface WriterChain {
  readonly name: string;
  head: ChainHead | undefined;
  /** The head being read back, shared by the units of a batch that append at once (store/pg/batch/group-commit.ts). */
  locking?: Promise<ChainHead> | undefined;
}

/**
 * The PostgreSQL audit store, over one unit of work's client.
 *
 * One hash chain per writer: `chain` names the writer (a node's pooled
 * client, store/pg/engine.ts), so audited requests on different clients and
 * nodes never wait for each other's chain. Within a chain, rows are linked
 * in `seq` order: each row's hash (HMAC-SHA256 under the chain key,
 * model/audit/chain.ts) covers the previous row's hash and its own fields,
 * with `seq` in the place SQLite's single chain uses the row id. The head of
 * each chain is a row of `audit_chains`, moved with every row in the same
 * statement, with its MAC (model/audit/head.ts: one HMAC per row); a
 * writer's first row also records its chain in the authenticated set of
 * chains (store/pg/audit/chain-set.ts). The writer keeps the head it last committed in memory (its
 * chain is its own); after a rollback, or at a new client's first row, the
 * head is read back under a row lock.
 *
 * Row ids (the API's entry ids and cursors) are the table's identity:
 * global, not gap-free. `at` never decreases along a chain.
 */
export class PgAuditStore implements AuditStore {
  /**
   * @param db the unit of work's client.
   * @param chain this writer's chain (one per pooled client, so no other
   *   unit of work writes it meanwhile).
   * @param chainKey the key rows are MACed with; null: plain SHA-256.
   * @param chainKeys every loaded root key's chain key (the set of chains
   *   may have been signed before a rotation); default: `chainKey` alone.
   * @param behind the unit of work's write-behind statements: the append is
   *   sent without waiting for its answer (store/pg/batch/write-behind.ts); absent,
   *   append() waits for it.
   */
  constructor(
    private readonly db: Queryable,
    private readonly chain: WriterChain,
    private readonly chainKey: Buffer | null,
    private readonly chainKeys: readonly Buffer[] = chainKey === null ? [] : [chainKey],
    private readonly behind?: WriteBehind,
  ) {}

  /**
   * Appends the row and moves the chain's head, in one statement. With the
   * unit's write-behind set, returns as soon as the statement is sent (no
   * promise when the chain's head is known): it rides the unit's next round
   * trip, and a failure fails the unit at COMMIT.
   */
  append(entry: AuditInsert): Promise<void> | undefined {
    const head = this.chain.head;
    if (head !== undefined) return this.send(entry, head);
    // One read of the head for every unit appending meanwhile; each then chains after the one before.
    const chain = this.chain;
    chain.locking ??= this.lockHead().finally(() => {
      chain.locking = undefined;
    });
    return chain.locking.then((locked) => this.send(entry, chain.head ?? locked));
  }

  private send(entry: AuditInsert, last: ChainHead): Promise<void> | undefined {
    const seq = last.seq + 1;
    const at = Math.max(entry.at, last.at);
    const hash = rowHash(last.hash, Object.assign({}, entry, { at, id: seq }), this.chainKey);
    const statement = runPrepared(this.db, APPEND, [
      entry.scope,
      at,
      entry.action,
      entry.key,
      entry.actor,
      entry.principal_id,
      entry.ip,
      entry.count,
      this.chain.name,
      seq,
      hash,
      this.chainKey === null ? null : headMac(this.chainKey, this.chain.name, seq, hash),
    ]);
    this.chain.head = { seq, hash, at };
    if (this.behind === undefined) return statement.then(() => undefined);
    this.behind.track(statement);
    return undefined;
  }

  /**
   * One page of a scope's rows, newest first (AuditStore.page).
   *
   * Every filter but a key prefix alone has an index that holds its rows in
   * id order (`audit_scope`, `audit_scope_action`, `audit_scope_key`, each
   * ending with the id), so a backward scan of it stops at the limit. The
   * planner chose otherwise when its statistics were older than a key's rows
   * (the table analysed while it was empty, or before one key grew fast): it
   * expected a few rows, fetched all of the key's by a bitmap scan and
   * sorted them (the figures: docs/performance.md, "Reads at scale"). So the page runs with sorts
   * off for this statement alone (AUDIT_PAGE_HINT, reset after it in the
   * same transaction; the three go out together on the pipelined
   * connection, so no other unit's statement comes between them). A key
   * prefix alone is planned as statistics say: a range of `audit_scope_key`
   * and a sort may then be the cheaper plan.
   * @throws whatever node-postgres throws for the statement.
   */
  async page(q: AuditPageQuery): Promise<AuditRow[]> {
    const values = [q.scope, q.sinceMs ?? null, q.untilMs ?? null, q.beforeId ?? null, q.action, q.key, q.keyPrefix, q.limit];
    if (q.keyPrefix !== null && q.key === null) return (await this.db.query<AuditRow>(AUDIT_PAGE_SQL, values)).rows;
    const [, page] = await Promise.all([
      this.db.query(AUDIT_PAGE_HINT.on),
      this.db.query<AuditRow>(AUDIT_PAGE_SQL, values),
      this.db.query(AUDIT_PAGE_HINT.off),
    ]);
    return page.rows;
  }

  /**
   * The chain's head as committed, locked for this transaction (one
   * statement: a new chain's row is made at the genesis hash, an existing
   * one is locked and read).
   */
  private async lockHead(): Promise<ChainHead> {
    // xmax = 0: the row was inserted by this statement (a new chain), not locked by the update.
    const r = await this.db.query<ChainHead & { created: boolean }>(
      `INSERT INTO audit_chains (chain, seq, hash, at) VALUES ($1, 0, $2, 0)
       ON CONFLICT (chain) DO UPDATE SET chain = excluded.chain
       RETURNING seq, hash, at, (xmax = 0) AS created`,
      [this.chain.name, GENESIS_HASH],
    );
    const head = r.rows[0];
    if (head === undefined) throw new Error(`audit chain ${this.chain.name} has no head row`);
    if (head.created && this.chainKey !== null) await recordNewChain(this.db, this.chain.name, this.chainKey, this.chainKeys);
    return { seq: head.seq, hash: head.hash, at: head.at };
  }
}
