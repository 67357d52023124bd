import type pg from "pg";
import { ClosedError, DatabaseUnavailableError } from "../../../model/engine-errors.js";
import { AfterCommitQueue, runAfterCommit } from "../../work.js";
import type { Awaitable, UnitOfWork } from "../../work.js";
import { isConnectionError } from "../connection-errors.js";
import { corkedConnection } from "./cork.js";
import type { Queryable } from "./queryable.js";
import { NeedsOrder, SharedBatch } from "./shared-batch.js";
import { WriteBehind } from "./write-behind.js";

/**
 * How long a unit inside a batch may wait for a lock, milliseconds
 * (PgUnitOfWork.runShared): past it the batch runs again unit by unit.
 * Batches in flight lock many rows each in arrival order, so two of them
 * can deadlock, and the wait sets the p99 of spread reads; 20 ms keeps it
 * at the skeleton's (the figures: docs/performance.md, "PostgreSQL").
 */
export const BATCH_LOCK_TIMEOUT_MS = 20;

/**
 * How long a unit whose connection failed before its COMMIT was sent is
 * tried again on a new connection, milliseconds, by default
 * (VAULT_DATABASE_RETRY_MS; docs/scaling.md, "When the database goes away").
 */
export const DEFAULT_RETRY_MS = 5000;

/** First and largest pause between two attempts of a unit, milliseconds (doubling from the first). */
const RETRY_PAUSE_MS = { first: 25, most: 500 };

/**
 * An attempt's failure that left nothing committed: the connection failed
 * (or could not be made, or reached a server that refuses writes) before
 * the attempt's COMMIT was handed to it. The unit may run again.
 */
class FailedBeforeCommit extends Error {
  constructor(readonly driverError: unknown) {
    super("failed before COMMIT", { cause: driverError });
  }
}

/** runShared()'s outcome for a unit that needs the order between transactions: run it again alone, after the batch. */
export const RUN_ALONE: unique symbol = Symbol("run alone");

/** What runs a PostgreSQL node's units of work: PgUnitOfWork, or the group commit over it (store/pg/batch/group-commit.ts). */
export type PgUnits<W> = Pick<PgUnitOfWork<W>, "run" | "runOnClient" | "close">;

export type { Queryable };

/** What one attempt of a unit builds its work handle with (PgUnitOfWork's workFor). */
export interface UnitParts {
  /** Takes the statements the stores send without waiting (settled before COMMIT is confirmed). */
  readonly behind: WriteBehind;
  /** When given, wraps what the stores send their statements through (a unit's view of a batch's connection). */
  readonly view?: ((db: Queryable) => Queryable) | undefined;
  /** Where the work handle's afterCommit puts its callbacks: run after this attempt committed, dropped otherwise. */
  readonly commits: AfterCommitQueue;
}

/**
 * The PostgreSQL engine's unit of work: one transaction per run() on a
 * client of the pool (`BEGIN` ... `COMMIT`, READ COMMITTED, PostgreSQL's
 * default `synchronous_commit=on`), so the promise settles only after the
 * COMMIT is durable; any error rolls the whole unit back. BEGIN is sent
 * with the unit's first statement, and the write-behind statements
 * (store/pg/batch/write-behind.ts: the audit append) with the next one or the
 * COMMIT, on the pipelined connection (docs/performance.md, "PostgreSQL";
 * test/store/pg/round-trips.pg.test.ts counts them). Units run
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
 * A unit's statements, and its BEGIN and COMMIT, go through its client's
 * corked connection (cork.ts): those of one tick in one write. Its work
 * handle's afterCommit callbacks run once its COMMIT is confirmed, before
 * it answers.
 *
 * @typeParam W the work handle, built per unit over its client (the stores).
 */
export class PgUnitOfWork<W> implements UnitOfWork<W> {
  private closed = false;

  /**
   * @param pool the node's pool (store/pg/pool.ts).
   * @param workFor builds the work handle of one attempt over the unit's
   *   connection (one per pooled client: engine state may be keyed by it),
   *   with that attempt's parts (UnitParts).
   * @param hooks.onRollback told of each rolled-back unit's connection, so
   *   engine state about that client (its audit chain's head) is dropped.
   * @param hooks.onRetry told, with the driver's error, when a unit is first
   *   held to run again after a failure before its COMMIT (a log line).
   * @param hooks.retryMs how long such a unit is tried again, milliseconds
   *   from its first failure (DEFAULT_RETRY_MS; 0: never, answer 503 at once).
   */
  constructor(
    private readonly pool: pg.Pool,
    private readonly workFor: (client: Queryable, unit: UnitParts) => W,
    private readonly hooks: { onRollback?: (client: Queryable) => void; onRetry?: (err: unknown) => void; retryMs?: number } = {},
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
    let commits: AfterCommitQueue | undefined;
    const result = await this.transaction(async (client, behind) => {
      // Each attempt registers afresh: a failed attempt's callbacks never run.
      const queue = new AfterCommitQueue();
      commits = queue;
      queue.begin();
      return fn(this.workFor(client, { behind, commits: queue }), client);
    });
    runAfterCommit(commits?.take() ?? []);
    return result;
  }

  /**
   * Runs the `fns` of a batch in one transaction on one client (the group
   * commit, group-commit.ts), all at once, their statements
   * interleaved on the pipelined connection. A unit that asks, before
   * changing anything, for a statement that orders transactions (an
   * advisory lock, a row lock, a SKIP LOCKED claim, declared so: ordering.ts;
   * NeedsOrder, shared-batch.ts)
   * is left out of the batch: its outcome is RUN_ALONE, and the caller runs
   * it again in a transaction of its own after the COMMIT, where those
   * statements order it against every other transaction (inside one
   * transaction two claims would take the same row, and two advisory locks
   * would both pass). Savepoints would not isolate
   * interleaved units, so there are none: a failed statement, or a unit
   * that fails after changing a row, fails the whole batch (rolled back; the
   * caller runs each unit again alone). A unit that fails without changing
   * anything (a refusal) keeps its error as its outcome. The afterCommit
   * callbacks of the units that succeeded run once the COMMIT is confirmed;
   * those of the others are dropped (a unit run again registers afresh).
   * @returns each unit's outcome, in order, once the COMMIT is confirmed
   *   (never before: a failure of the batch answers none of its units), or
   *   RUN_ALONE for a unit to run again on its own.
   * @throws (rejects) the batch's failure (rolled back: nothing of it
   *   committed), or as run() when its COMMIT or connection failed.
   */
  async runShared(fns: readonly ((w: W) => Awaitable<unknown>)[]): Promise<(PromiseSettledResult<unknown> | typeof RUN_ALONE)[]> {
    return this.transaction(async (client, behind) => {
      // A lock wait past this fails the batch, which then runs unit by unit: a batch never stalls long
      // behind another node's (and two nodes' batches never wait out a deadlock's second).
      behind.track(client.query(`SET LOCAL lock_timeout = ${BATCH_LOCK_TIMEOUT_MS}`));
      const batch = new SharedBatch();
      const outcomes: (PromiseSettledResult<unknown> | typeof RUN_ALONE)[] = [];
      const ordered: number[] = [];
      const afterCommit: (() => void)[][] = [];
      const runUnit = async (i: number): Promise<void> => {
        const unit = batch.unit(true);
        const own = new WriteBehind();
        const commits = new AfterCommitQueue();
        commits.begin();
        let outcome: PromiseSettledResult<unknown>;
        try {
          const value = await (fns[i] as (w: W) => Awaitable<unknown>)(this.workFor(client, { behind: own, view: unit.view, commits }));
          await own.settle();
          outcome = { status: "fulfilled", value };
        } catch (err) {
          outcome = { status: "rejected", reason: (await own.settled())?.error ?? err };
        }
        // Refused an ordering statement (even if it caught the refusal): this outcome does not count.
        if (unit.needsOrder && !unit.wrote) ordered.push(i);
        else if (unit.needsOrder || (outcome.status === "rejected" && unit.wrote)) batch.fail(outcome.status === "rejected" ? outcome.reason : new NeedsOrder(""));
        else outcomes[i] = outcome;
        if (outcome.status === "fulfilled") afterCommit[i] = commits.take();
      };
      await Promise.all(fns.map((_, i) => runUnit(i)));
      const failed = batch.failed;
      if (failed !== undefined) throw failed.error;
      // The units that asked for order run after the COMMIT, each alone (the caller): in the batch's
      // transaction, two SKIP LOCKED claims would not skip each other's rows, nor two advisory locks wait.
      for (const i of ordered) outcomes[i] = RUN_ALONE;
      return { outcomes, afterCommit };
    }).then(({ outcomes, afterCommit }) => {
      // Committed: the callbacks of the units whose outcome stands (a unit to run again alone has none here).
      outcomes.forEach((outcome, i) => {
        if (outcome !== RUN_ALONE && outcome.status === "fulfilled") runAfterCommit(afterCommit[i] ?? []);
      });
      return outcomes;
    });
  }

  /**
   * One transaction on a pooled client (attempt()), run again on a new
   * connection while it fails before its COMMIT was sent and the retry
   * window (hooks.retryMs from the first failure) lasts: such a failure
   * left nothing committed, so running `body` again cannot apply it twice
   * (a failover, a switchover's fast shutdown, a standby not yet promoted).
   * A failure once COMMIT was sent is never run again: its outcome is
   * unknown, DatabaseUnavailableError (503).
   * @throws as run().
   */
  private async transaction<T>(body: (client: Queryable, behind: WriteBehind) => Promise<T>): Promise<T> {
    let until: number | undefined;
    let pause = RETRY_PAUSE_MS.first;
    for (;;) {
      try {
        return await this.attempt(body);
      } catch (err) {
        if (!(err instanceof FailedBeforeCommit)) throw err;
        until ??= Date.now() + (this.hooks.retryMs ?? DEFAULT_RETRY_MS);
        if (this.closed || Date.now() + pause > until) throw new DatabaseUnavailableError(err.driverError);
        if (pause === RETRY_PAUSE_MS.first) this.hooks.onRetry?.(err.driverError);
        await new Promise((resolve) => setTimeout(resolve, pause));
        pause = Math.min(pause * 2, RETRY_PAUSE_MS.most);
      }
    }
  }

  /**
   * One transaction on a pooled client: BEGIN, `body`, COMMIT; ROLLBACK when
   * `body` or a write-behind statement fails; the client released (closed
   * when its connection broke, or when it reached a server that refuses
   * writes).
   * @throws FailedBeforeCommit for a connection failure before COMMIT was
   *   sent; DatabaseUnavailableError for one after; else as run().
   */
  private async attempt<T>(body: (client: Queryable, behind: WriteBehind) => Promise<T>): Promise<T> {
    if (this.closed) throw new ClosedError();
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw isConnectionError(err) ? new FailedBeforeCommit(err) : err;
    }
    // The connection's own error (its backend terminated, the server gone) while this unit holds it.
    let lost: Error | undefined;
    const onError = (err: Error) => {
      lost ??= err;
    };
    client.on("error", onError);
    let broken: Error | undefined;
    let commitSent = false;
    const behind = new WriteBehind();
    const connection = corkedConnection(client);
    try {
      // BEGIN rides the unit's first statement (the connection is pipelined).
      behind.track(connection.query("BEGIN"));
      try {
        const result = await body(connection, behind);
        // COMMIT rides the write-behind statements still in flight; a failed one made it a ROLLBACK.
        commitSent = true;
        const commit = connection.query("COMMIT");
        behind.track(commit);
        await behind.settle();
        if ((await commit).command !== "COMMIT") throw new Error("the transaction was rolled back at COMMIT");
        return result;
      } catch (err) {
        this.hooks.onRollback?.(connection);
        // A write-behind statement that failed is the cause; what failed after it only saw the aborted transaction.
        const cause = (await behind.settled())?.error ?? err;
        try {
          await connection.query("ROLLBACK");
        } catch (rollbackError) {
          // The connection is gone: do not hand it back to the pool.
          broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
        }
        throw cause;
      }
    } catch (err) {
      if (broken !== undefined || lost !== undefined || isConnectionError(err)) {
        // Not kept for the next unit: a connection to a server that refuses writes is dropped too.
        broken ??= lost ?? (err instanceof Error ? err : new Error(String(err)));
        // Lost before COMMIT was sent: nothing committed, the unit may run again. After: never acknowledged, 503.
        throw commitSent ? new DatabaseUnavailableError(err) : new FailedBeforeCommit(err);
      }
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
