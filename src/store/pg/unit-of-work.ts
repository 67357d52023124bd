import type pg from "pg";
import { ClosedError } from "../../group-commit.js";
import type { Awaitable, UnitOfWork } from "../work.js";

/** What a PostgreSQL store runs its statements on: the unit of work's pooled client. */
export type Queryable = Pick<pg.PoolClient, "query">;

/**
 * The PostgreSQL engine's unit of work: one transaction per run() on a
 * client of the pool (`BEGIN` ... `COMMIT`, READ COMMITTED, PostgreSQL's
 * default `synchronous_commit=on`), so the promise settles only after the
 * COMMIT is durable; any error rolls the whole unit back. Units run
 * concurrently, as many as the pool has clients; the guarded
 * `UPDATE ... RETURNING` statements and row locks keep each rule atomic
 * across units and nodes.
 *
 * @typeParam W the work handle, built per unit over its client (the stores).
 */
export class PgUnitOfWork<W> implements UnitOfWork<W> {
  private closed = false;

  /**
   * @param pool the node's pool (store/pg/pool.ts).
   * @param workFor builds the work handle over the unit's client.
   */
  /**
   * @param hooks.onRollback told of each rolled-back unit's client, so
   *   engine state about that client (its audit chain's head) is dropped.
   */
  constructor(
    private readonly pool: pg.Pool,
    private readonly workFor: (client: Queryable) => W,
    private readonly hooks: { onRollback?: (client: Queryable) => void } = {},
  ) {}

  /**
   * Runs `fn` in its own transaction and resolves with its result after COMMIT.
   * @throws (rejects) whatever `fn` throws (its transaction rolled back), the
   *   COMMIT's error, a connection error, or ClosedError after close().
   */
  async run<T>(fn: (w: W) => Awaitable<T>): Promise<T> {
    return this.runOnClient((w) => fn(w));
  }

  /**
   * run() that also hands `fn` the unit's client, for engine code that needs
   * PostgreSQL itself (row locks at start, the migration's checks). Domain
   * code uses run().
   */
  async runOnClient<T>(fn: (w: W, client: Queryable) => Awaitable<T>): Promise<T> {
    if (this.closed) throw new ClosedError();
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      await client.query("BEGIN");
      try {
        const result = await fn(this.workFor(client), client);
        await client.query("COMMIT");
        return result;
      } catch (err) {
        this.hooks.onRollback?.(client);
        try {
          await client.query("ROLLBACK");
        } catch (rollbackError) {
          // The connection is gone: do not hand it back to the pool.
          broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
        }
        throw err;
      }
    } finally {
      client.release(broken);
    }
  }

  /** Refuses further units (graceful stop); units in flight finish. */
  close(): void {
    this.closed = true;
  }
}
