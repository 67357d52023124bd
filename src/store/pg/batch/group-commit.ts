import { ClosedError } from "../../../model/engine-errors.js";
import { DatabaseUnavailableError } from "../../work.js";
import type { Awaitable, UnitOfWork } from "../../work.js";
import { RUN_ALONE } from "./unit-of-work.js";
import type { PgUnitOfWork, Queryable } from "./unit-of-work.js";

/** The most units one batch takes. */
export const DEFAULT_MAX_BATCH = 64;

/** The most batches in flight on one node at once (each on a pooled connection of its own). */
export const DEFAULT_MAX_IN_FLIGHT = 4;

interface Waiting {
  fn: (w: never) => Awaitable<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/**
 * The PostgreSQL group commit (docs/performance.md, "PostgreSQL"): the units
 * of work that arrive in one event-loop turn on a node share one
 * transaction on one pooled client, on its pipelined connection: fifty
 * readers of one key take its row lock once (the transaction's) and the
 * node pays one BEGIN and one COMMIT, one fsync, for the batch.
 *
 * - The units run at once in the batch's transaction, their statements
 *   interleaved (PgUnitOfWork.runShared). A unit that needs the order
 *   between transactions (the free-tier advisory lock, a row lock, a SKIP
 *   LOCKED claim: a statement declared so, ordering.ts; shared-batch.ts)
 *   asks for it before changing anything, and is
 *   left out: it runs again after the batch's COMMIT in a transaction of its
 *   own, where those statements order it against every other transaction
 *   (inside one transaction two outbox claims would take the same delivery).
 * - Every answer, success or failure, comes after the batch's COMMIT: no
 *   unit resolves with anything a later failure of its batch could undo.
 * - Interleaved units cannot be isolated from each other (savepoints would
 *   roll back their neighbours' statements too): a failed statement, or a
 *   unit that fails after changing a row, rolls the whole batch back, and
 *   each of its units then runs again alone, in a transaction of its own
 *   (units are closures over the request, and a rolled-back transaction
 *   changed nothing, so running one again is the same unit of work; what a
 *   unit does outside the transaction waits for Work.afterCommit, and so
 *   happens once). So do
 *   a lock waited for longer than BATCH_LOCK_TIMEOUT_MS (another node's
 *   batch holding it) and a deadlock. A unit that fails without changing a
 *   row (a refusal) answers its error after the COMMIT.
 * - A batch whose connection is lost (its COMMIT's fate unknown) answers
 *   every unit DatabaseUnavailableError (503): none is acknowledged, none is
 *   run again.
 * - Bounds: a batch takes at most `maxBatch` units and forms within one
 *   event-loop turn (no timer); at most `maxInFlight` batches run at once,
 *   each on its own connection; a unit waits for at most the batches in
 *   flight and its own, and a lock wait inside a batch for at most
 *   BATCH_LOCK_TIMEOUT_MS. A lone unit runs as without the group commit.
 *
 * @typeParam W the work handle (the stores of the batch's transaction).
 */
export class PgGroupCommit<W> implements UnitOfWork<W> {
  private queue: Waiting[] = [];
  private scheduled = false;
  private inFlight = 0;
  private closed = false;

  /**
   * @param single the engine's unit of work: each batch's transaction, and each unit run alone.
   * @param maxBatch the most units one batch takes (at least 1).
   * @param maxInFlight the most batches in flight at once (at least 1).
   */
  constructor(
    private readonly single: PgUnitOfWork<W>,
    private readonly maxBatch = DEFAULT_MAX_BATCH,
    private readonly maxInFlight = DEFAULT_MAX_IN_FLIGHT,
  ) {}

  /**
   * Runs `fn` in the next batch and resolves with its result after that batch's COMMIT.
   * @throws (rejects) whatever `fn` throws when it runs alone, ClosedError
   *   after close(), DatabaseUnavailableError as PgUnitOfWork.run().
   */
  run<T>(fn: (w: W) => Awaitable<T>): Promise<T> {
    if (this.closed) return Promise.reject(new ClosedError());
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ fn: fn as (w: never) => Awaitable<unknown>, resolve: resolve as (value: unknown) => void, reject });
      this.schedule();
    });
  }

  /** PgUnitOfWork.runOnClient: engine code that needs the client runs on its own, outside the batches. */
  runOnClient<T>(fn: (w: W, client: Queryable) => Awaitable<T>): Promise<T> {
    return this.single.runOnClient(fn);
  }

  /** Refuses further units (graceful stop); queued units and the batch in flight finish. */
  close(): void {
    this.closed = true;
    if (this.inFlight === 0 && !this.scheduled && this.queue.length === 0) this.single.close();
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.maxInFlight || this.queue.length === 0) return;
    this.scheduled = true;
    // The batch forms over the rest of this event-loop turn.
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    if (this.inFlight >= this.maxInFlight || this.queue.length === 0) return;
    this.inFlight++;
    const batch = this.queue.splice(0, this.maxBatch);
    try {
      await this.runBatch(batch);
    } finally {
      this.inFlight--;
      this.schedule();
      if (this.closed && this.inFlight === 0 && !this.scheduled && this.queue.length === 0) this.single.close();
    }
  }

  private async runBatch(batch: Waiting[]): Promise<void> {
    const alone = (unit: Waiting) => this.single.run(unit.fn as (w: W) => Awaitable<unknown>).then(unit.resolve, unit.reject);
    if (batch.length === 1) {
      await alone(batch[0] as Waiting);
      return;
    }
    let outcomes: (PromiseSettledResult<unknown> | typeof RUN_ALONE)[];
    try {
      outcomes = await this.single.runShared(batch.map((unit) => unit.fn as (w: W) => Awaitable<unknown>));
    } catch (err) {
      // Lost: the COMMIT may have landed; nothing is acknowledged and nothing runs twice.
      if (err instanceof DatabaseUnavailableError || err instanceof ClosedError) {
        for (const unit of batch) unit.reject(err);
        return;
      }
      // Rolled back whole: each unit again, on its own (concurrently, as the pool allows).
      await Promise.all(batch.map(alone));
      return;
    }
    const again: Waiting[] = [];
    batch.forEach((unit, i) => {
      const outcome = outcomes[i];
      if (outcome === RUN_ALONE || outcome === undefined) again.push(unit);
      else if (outcome.status === "fulfilled") unit.resolve(outcome.value);
      else unit.reject(outcome.reason);
    });
    // The units that need the order between transactions, each in its own, after the batch's COMMIT.
    await Promise.all(again.map(alone));
  }
}
