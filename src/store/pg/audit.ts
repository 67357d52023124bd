import { GENESIS_HASH, rowHash } from "../../domain/audit-chain.js";
import type { AuditInsert, AuditPageQuery, AuditRow, AuditStore } from "../audit.js";
import type { Queryable } from "./unit-of-work.js";

/** A chain's head as `audit_chains` keeps it: its last position, hash and time (ms). */
interface ChainHead {
  seq: number;
  hash: string;
  at: number;
}

/**
 * The PostgreSQL audit store, over one unit of work's client.
 *
 * One hash chain per writer: `chain` names the writer (a node's pooled
 * client, store/pg/engine.ts), so audited requests on different clients and
 * nodes never wait for each other's chain. Within a chain, rows are linked
 * in `seq` order: each row's hash (HMAC-SHA256 under the chain key,
 * domain/audit-chain.ts) covers the previous row's hash and its own fields,
 * with `seq` in the place SQLite's single chain uses the row id. The head of
 * each chain is a row of `audit_chains`, read under `FOR UPDATE` at the
 * unit's first append and moved with every row, in the same transaction:
 * a rolled-back unit leaves its chain as it was, and two writers that ever
 * share a chain name take turns on its lock.
 *
 * Row ids (the API's entry ids and cursors) are the table's identity:
 * global, not gap-free. `at` never decreases along a chain.
 */
export class PgAuditStore implements AuditStore {
  /** The chain's head as this unit of work left it (read once per unit). */
  private head: ChainHead | undefined;

  /**
   * @param db the unit of work's client.
   * @param chain this writer's chain name.
   * @param chainKey the key rows are MACed with; null: plain SHA-256.
   */
  constructor(
    private readonly db: Queryable,
    private readonly chain: string,
    private readonly chainKey: Buffer | null,
  ) {}

  async append(entry: AuditInsert): Promise<void> {
    const last = this.head ?? (await this.lockHead());
    const seq = last.seq + 1;
    const at = Math.max(entry.at, last.at);
    const hash = rowHash(last.hash, { ...entry, at, id: seq }, this.chainKey);
    await this.db.query(
      `INSERT INTO audit (scope, at, action, key, actor, principal_id, ip, count, chain, seq, hash)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [entry.scope, at, entry.action, entry.key, entry.actor, entry.principal_id, entry.ip, entry.count, this.chain, seq, hash],
    );
    await this.db.query("UPDATE audit_chains SET seq = $2, hash = $3, at = $4 WHERE chain = $1", [this.chain, seq, hash, at]);
    this.head = { seq, hash, at };
  }

  async page(q: AuditPageQuery): Promise<AuditRow[]> {
    const r = await this.db.query<AuditRow>(
      `SELECT id, scope, at, action, key, actor, principal_id, ip, count, hash FROM audit
         WHERE scope = $1
           AND ($2::bigint IS NULL OR at >= $2) AND ($3::bigint IS NULL OR at < $3) AND ($4::bigint IS NULL OR id < $4)
           AND ($5::text IS NULL OR action = $5) AND ($6::text IS NULL OR key = $6)
           AND ($7::text IS NULL OR starts_with(key, $7))
         ORDER BY id DESC LIMIT $8`,
      [q.scope, q.sinceMs ?? null, q.untilMs ?? null, q.beforeId ?? null, q.action, q.key, q.keyPrefix, q.limit],
    );
    return r.rows;
  }

  /** The chain's head, locked for this transaction; a new chain starts at the genesis hash. */
  private async lockHead(): Promise<ChainHead> {
    await this.db.query(
      "INSERT INTO audit_chains (chain, seq, hash, at) VALUES ($1, 0, $2, 0) ON CONFLICT (chain) DO NOTHING",
      [this.chain, GENESIS_HASH],
    );
    const r = await this.db.query<ChainHead>("SELECT seq, hash, at FROM audit_chains WHERE chain = $1 FOR UPDATE", [this.chain]);
    const head = r.rows[0];
    if (head === undefined) throw new Error(`audit chain ${this.chain} has no head row`);
    return head;
  }
}
