import type { Db } from "./db.js";
import { runAfterCommit } from "../work.js";
import type { AfterCommitQueue, Awaitable, RunOptions, UnitOfWork } from "../work.js";

import { ClosedError } from "../../model/engine-errors.js";
import { BatchHooks } from "./batch-hooks.js";

// Re-exported: the batch's hook points live in batch-hooks.ts.
export type { BatchEvents } from "./batch-hooks.js";

/** Thrown by GroupCommit.run once the vault is shutting down (model/engine-errors.ts). */
export { ClosedError };

/** A unit of work queued for a batch: its function and its run() promise's settlers. */
interface Queued<W> {
  fn: (w: W) => unknown;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/** A unit whose savepoint is released: settled with `value` once the batch commits, after its `afterCommit` callbacks. */
interface Waiter<W> {
  unit: Queued<W>;
  value: unknown;
  afterCommit: (() => void)[];
}

const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  value !== null && (typeof value === "object" || typeof value === "function") && typeof (value as { then?: unknown }).then === "function";

/**
 * Group commit, the SQLite engine's unit of work: the writes of all requests
 * handled in one event-loop turn share one SQLite transaction, so one fsync
 * (synchronous=FULL) acknowledges many requests.
 *
 * - run() queues its function; the first run() of a turn schedules the
 *   batch with setImmediate, which runs after the poll phase has handed over
 *   every request that arrived. The batch opens `BEGIN IMMEDIATE`, runs the
 *   queued units back to back and commits. Running them together, instead of
 *   each as its request is parsed, keeps SQLite's and the cipher's code and
 *   data warm across the batch (measured: docs/performance-log.md, round four).
 * - Each unit runs its function inside its own SAVEPOINT, handing it the
 *   work handle `W` (the stores: the only way to the database). If the
 *   function throws or rejects, only its own changes are rolled back and the
 *   other requests of the batch are untouched.
 * - Units of work run one at a time. A synchronous function runs at once; an
 *   async one (stores are async at their boundary, for the PostgreSQL engine)
 *   holds its savepoint until its promise settles, and the units queued
 *   behind it start after it. SQLite's stores answer synchronously, so an
 *   async unit settles within the same turn's microtasks: a read-modify-write
 *   inside one unit is atomic, as with a synchronous one. A unit must not
 *   await I/O (the batch's COMMIT waits for it).
 * - The promise run() returns settles only after the COMMIT: no response
 *   leaves before its write is durable, and no answer is built from rows of
 *   a batch that might not commit. If the COMMIT fails, every request of the
 *   batch is rejected and nothing of it was acknowledged.
 *
 * - A unit's Work.afterCommit callbacks (`commits`) run once the batch
 *   committed, before its promise resolves; a unit rolled back to its
 *   savepoint, or a batch that fails, drops them.
 *
 * - A unit run with `{alone: true}` (a large write: a file's create)
 *   commits in a batch of its own, one such unit a batch: after the batch of
 *   the small units queued with it has committed, on a later turn (its own
 *   setImmediate), so their answers leave before its long COMMIT (writing
 *   and syncing megabytes) holds the event loop, and small units queued
 *   while it runs wait for the batch after it. Such units run in the order
 *   queued (docs/performance.md, "Files").
 *
 * The function must not call run() itself (it would wait for itself).
 */
export class GroupCommit<W = void> extends BatchHooks implements UnitOfWork<W> {
  private waiters: Waiter<W>[] = [];
  private open = false;
  private closed = false;
  /** A setImmediate to run the queued units is pending. */
  private drainScheduled = false;
  private readonly drainTurn = (): void => {
    this.drainScheduled = false;
    this.flush();
  };
  /** An async unit of work holds its savepoint. */
  private busy = false;
  private readonly queue: Queued<W>[] = [];
  /** Units run with `alone`, each for a batch of its own. */
  private readonly aloneQueue: Queued<W>[] = [];
  /** A setImmediate to start the next `alone` unit is pending. */
  private aloneScheduled = false;
  /** The next `alone` unit has let queued small units go first once. */
  private aloneDeferred = false;
  /** The open batch is an `alone` unit's: no other unit starts in it. */
  private aloneOpen = false;
  private readonly aloneTurn = (): void => {
    this.aloneScheduled = false;
    this.flushAlone();
  };
  private readonly begin;
  private readonly commit;
  private readonly rollback;
  private readonly savepoint;
  private readonly release;
  private readonly rollbackTo;

  /**
   * @param db the connection every unit of work runs on.
   * @param work the handle given to every unit (the SQLite stores).
   * @param commits where the work handle's afterCommit puts the callbacks
   *   of the unit running (store/sqlite/index.ts); absent: the handle has none.
   */
  constructor(
    private readonly db: Db,
    private readonly work: W = undefined as W,
    private readonly commits?: AfterCommitQueue,
  ) {
    super();
    this.begin = db.prepare("BEGIN IMMEDIATE");
    this.commit = db.prepare("COMMIT");
    this.rollback = db.prepare("ROLLBACK");
    this.savepoint = db.prepare("SAVEPOINT request");
    this.release = db.prepare("RELEASE request");
    this.rollbackTo = db.prepare("ROLLBACK TO request");
  }

  /** Units of work queued for the next batch, not started yet (tests and diagnostics). */
  get queued(): number {
    return this.queue.length;
  }

  /** True while a batch is open (from the turn's first unit of work to its COMMIT). */
  get inBatch(): boolean {
    return this.open;
  }

  /**
   * Runs `fn` with the work handle in the current batch (with `alone`, in
   * a batch of its own) and resolves with its result once the batch has
   * committed.
   * @throws (rejects) whatever `fn` throws or rejects with (its changes
   *   rolled back), the COMMIT's error, or ClosedError after close().
   */
  run<T>(fn: (w: W) => Awaitable<T>, options?: RunOptions): Promise<T> {
    if (this.closed) return Promise.reject(new ClosedError());
    return new Promise<T>((resolve, reject) => {
      if (options?.alone === true) {
        this.aloneQueue.push({ fn, resolve: resolve as (value: unknown) => void, reject });
        this.scheduleAlone();
        return;
      }
      this.queue.push({ fn, resolve: resolve as (value: unknown) => void, reject });
      if (!this.drainScheduled) {
        this.drainScheduled = true;
        setImmediate(this.drainTurn);
      }
    });
  }

  /**
   * Opens the batch if needed and the unit's savepoint, and runs it; the unit
   * is settled through its Queued settlers (no promise of its own here).
   */
  private start(unit: Queued<W>): void {
    try {
      // No COMMIT to schedule here: units start from flush(), which commits
      // after them, or behind a unit flush() found in progress, and then
      // flush() has already put itself on the next turn.
      if (!this.open) {
        this.begin.run();
        this.open = true;
      }
      this.savepoint.run();
    } catch (err) {
      // The database does not answer (closed, locked by another process): this unit fails, nothing ran.
      unit.reject(err);
      return;
    }
    for (const hook of this.savepointHooks) hook();
    this.commits?.begin();
    let result: unknown;
    try {
      result = unit.fn(this.work);
    } catch (err) {
      this.abandon(unit, err);
      return;
    }
    if (!isThenable(result)) {
      this.finish(unit, result);
      return;
    }
    this.busy = true;
    const settled = result instanceof Promise ? result : Promise.resolve(result);
    settled.then(
      (value: unknown) => {
        this.busy = false;
        this.finish(unit, value);
        this.next();
      },
      (err: unknown) => {
        this.busy = false;
        this.abandon(unit, err);
        this.next();
      },
    );
  }

  /** Releases the unit's savepoint; the unit settles with the batch's COMMIT. */
  private finish(unit: Queued<W>, value: unknown): void {
    try {
      this.release.run();
    } catch (err) {
      this.abandon(unit, err);
      return;
    }
    this.waiters.push({ unit, value, afterCommit: this.commits?.take() ?? [] });
  }

  /**
   * Rejects the unit and rolls its savepoint back (or, when SQLite dropped
   * the transaction or cannot roll back to the savepoint, fails the batch).
   */
  private abandon(unit: Queued<W>, err: unknown): void {
    // Its changes are rolled back: so are its after-commit callbacks.
    this.commits?.take();
    unit.reject(err);
    if (this.db.inTransaction) {
      try {
        this.rollbackTo.run();
        this.release.run();
        this.rolledBack(false);
        return;
      } catch {
        try {
          this.rollback.run();
        } catch {
          // the connection is unusable; the batch's rejection reports the cause
        }
      }
    }
    // Nothing of this batch is durable (I/O error, disk full), so nothing of it is acknowledged.
    this.failBatch(err);
  }

  /** Starts the queued units of work, in order, until one is in progress (busy) or none is left. */
  private next(): void {
    // Every unit that can start now starts: a synchronous one finishes at
    // once, so the loop goes on until one holds its savepoint or none is left.
    while (!this.busy && !this.aloneOpen) {
      const queued = this.queue.shift();
      if (queued === undefined) return;
      if (this.closed) {
        queued.reject(new ClosedError());
        continue;
      }
      this.start(queued);
    }
  }

  /**
   * Runs the queued units of work now (one at a time, see the class) and
   * commits the batch, if one is open, settling its promises; when a unit
   * still awaits something, the COMMIT follows on a later turn.
   */
  flush(): void {
    this.next();
    if (!this.open) return;
    if (this.busy) {
      // A unit of work awaits something outside SQLite: commit after it.
      setImmediate(() => this.flush());
      return;
    }
    this.commitOpen();
  }

  /** Queues the start of the next `alone` unit on a turn of its own, unless one is queued. */
  private scheduleAlone(): void {
    if (this.aloneScheduled || this.aloneQueue.length === 0) return;
    this.aloneScheduled = true;
    setImmediate(this.aloneTurn);
  }

  /**
   * Starts the next `alone` unit in a batch of its own and commits it; while
   * another batch is open (an async unit holds it), on a later turn.
   */
  private flushAlone(): void {
    if (this.open || this.busy) {
      this.scheduleAlone();
      return;
    }
    // Small units queued meanwhile go first, once: their batch is this turn's next immediate; under a
    // steady stream of them the alone unit then goes next all the same.
    if (this.queue.length > 0 && !this.aloneDeferred) {
      this.aloneDeferred = true;
      this.scheduleAlone();
      return;
    }
    this.aloneDeferred = false;
    const unit = this.aloneQueue.shift();
    if (unit === undefined) return;
    if (this.closed) {
      unit.reject(new ClosedError());
      this.scheduleAlone();
      return;
    }
    this.aloneOpen = true;
    this.start(unit);
    this.commitAlone();
  }

  /** Commits the `alone` unit's batch once its unit settled; then the small units queued meanwhile get their turn. */
  private commitAlone(): void {
    if (this.busy) {
      setImmediate(() => this.commitAlone());
      return;
    }
    this.aloneOpen = false;
    if (this.open) this.commitOpen();
    if (this.queue.length > 0 && !this.drainScheduled) {
      this.drainScheduled = true;
      setImmediate(this.drainTurn);
    }
    this.scheduleAlone();
  }

  /** Commits the open batch, settling its units' promises (rejecting them all when the COMMIT fails). */
  private commitOpen(): void {
    const waiters = this.waiters;
    this.waiters = [];
    this.open = false;
    const started = this.committedHooks.length > 0 ? performance.now() : 0;
    try {
      for (const hook of this.beforeCommitHooks) hook();
      this.commit.run();
    } catch (err) {
      if (this.db.inTransaction) {
        try {
          this.rollback.run();
        } catch {
          // the connection is unusable; the rejection below reports the cause
        }
      }
      this.rolledBack(true);
      for (const w of waiters) w.unit.reject(err);
      return;
    }
    if (this.committedHooks.length > 0) {
      const ms = performance.now() - started;
      for (const hook of this.committedHooks) hook(waiters.length, ms);
    }
    for (const w of waiters) {
      runAfterCommit(w.afterCommit);
      w.unit.resolve(w.value);
    }
  }

  /** Commits what is pending and refuses further work (graceful stop). */
  close(): void {
    // What waited for a batch of its own is committed now with the rest.
    this.aloneOpen = false;
    this.queue.push(...this.aloneQueue.splice(0));
    this.flush();
    this.closed = true;
  }

  private failBatch(err: unknown): void {
    const waiters = this.waiters;
    this.waiters = [];
    this.open = false;
    this.rolledBack(true);
    for (const w of waiters) w.unit.reject(err);
  }

  private rolledBack(whole: boolean): void {
    for (const hook of this.rollbackHooks) hook(whole);
  }
}
