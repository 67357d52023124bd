import type pg from "pg";
import { ClosedError, DatabaseUnavailableError } from "../errors.js";
import type { Awaitable, UnitOfWork } from "../work.js";
import { isConnectionError } from "./connection-errors.js";

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
 * A unit whose connection is lost (its backend terminated, the server
 * restarted, the network cut) or cannot get one rejects with
 * DatabaseUnavailableError (503), and its client is released with the error
 * so the pool closes it instead of handing it out again; the next unit
 * connects afresh, and the engine's per-client state (prepared statements,
 * the audit chain) starts over on the new client (docs/scaling.md, "When
 * the database goes away").
 *
 * @typeParam W the work handle, built per unit over its client (the stores).
 */
export class PgUnitOfWork<W> implements UnitOfWork<W> {
  private closed = false;

  /**
   * @param pool the node's pool (store/pg/pool.ts).
   * @param workFor builds the work handle over the unit's client.
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
   *   COMMIT's error, ClosedError after close(), or DatabaseUnavailableError
   *   when no connection could be made or the unit's connection was lost
   *   (its outcome then unknown: the caller must not acknowledge it).
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
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw isConnectionError(err) ? new DatabaseUnavailableError(err) : err;
    }
    // The connection's own error (its backend terminated, the server gone) while this unit holds it.
    let lost: Error | undefined;
    const onError = (err: Error) => {
      lost ??= err;
    };
    client.on("error", onError);
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
    } catch (err) {
      // Lost mid-unit (a COMMIT sent on it may or may not have landed): never acknowledged, 503.
      if (broken !== undefined || lost !== undefined || isConnectionError(err)) throw new DatabaseUnavailableError(err);
      throw err;
    } finally {
      client.off("error", onError);
      // With an error, pg-pool closes the client instead of keeping it idle;
      // the engine's state about it (its audit chain) goes with it.
      client.release(broken ?? lost);
    }
  }

  /** Refuses further units (graceful stop); units in flight finish. */
  close(): void {
    this.closed = true;
  }
}
