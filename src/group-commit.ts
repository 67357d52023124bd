import type { Db } from "./db.js";

/** Thrown by GroupCommit.run once the vault is shutting down. */
export class ClosedError extends Error {
  constructor() {
    super("the vault is shutting down");
    this.name = "ClosedError";
  }
}

interface Waiter {
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit: the writes of all requests handled in one event-loop turn
 * share one SQLite transaction, so one fsync (synchronous=FULL) acknowledges
 * many requests.
 *
 * - The first run() of a turn opens `BEGIN IMMEDIATE` and schedules the
 *   COMMIT with setImmediate (after the poll phase has handed over every
 *   request that arrived).
 * - Each run() executes its function at once, synchronously, inside its own
 *   SAVEPOINT: if the function throws, only its own changes are rolled back
 *   and the other requests of the batch are untouched.
 * - The promise run() returns settles only after the COMMIT: no response
 *   leaves before its write is durable. If the COMMIT fails, every request of
 *   the batch is rejected and nothing of it was acknowledged.
 *
 * The function must be synchronous and must not call run() itself. Because
 * it runs to completion before any other JavaScript, a read-modify-write
 * inside it is atomic.
 */
export class GroupCommit {
  private waiters: Waiter[] = [];
  private readonly beforeCommitHooks: (() => void)[] = [];
  private readonly rollbackHooks: ((whole: boolean) => void)[] = [];
  private readonly savepointHooks: (() => void)[] = [];
  private readonly committedHooks: ((batchSize: number, ms: number) => void)[] = [];
  private open = false;
  private closed = false;
  private readonly begin;
  private readonly commit;
  private readonly rollback;
  private readonly savepoint;
  private readonly release;
  private readonly rollbackTo;

  constructor(private readonly db: Db) {
    this.begin = db.prepare("BEGIN IMMEDIATE");
    this.commit = db.prepare("COMMIT");
    this.rollback = db.prepare("ROLLBACK");
    this.savepoint = db.prepare("SAVEPOINT request");
    this.release = db.prepare("RELEASE request");
    this.rollbackTo = db.prepare("ROLLBACK TO request");
  }

  /**
   * Registers work to do inside the batch's transaction just before its
   * COMMIT (for example writing a head pointer once per batch instead of once
   * per row). If it throws, the batch fails like a failed COMMIT.
   */
  onBeforeCommit(hook: () => void): void {
    this.beforeCommitHooks.push(hook);
  }

  /**
   * Registers a listener for rollbacks, so in-memory caches of what the
   * transaction wrote can be dropped. `whole` is true when the whole batch
   * was rolled back, false when one request's savepoint was.
   */
  onRollback(hook: (whole: boolean) => void): void {
    this.rollbackHooks.push(hook);
  }

  /**
   * Registers a listener told of every committed batch: how many run() calls
   * it carried and how long its pre-commit hooks and COMMIT (the fsync) took,
   * milliseconds (metrics).
   */
  onCommitted(hook: (batchSize: number, ms: number) => void): void {
    this.committedHooks.push(hook);
  }

  /** True while a batch is open (between the first run() of a turn and its COMMIT). */
  get inBatch(): boolean {
    return this.open;
  }

  /**
   * Registers a listener called as each request's SAVEPOINT opens, before its
   * function runs: work buffered in memory for the batch (audit rows) marks
   * where the request's part starts, so a rollback to the savepoint
   * (onRollback with whole = false) can drop exactly that part.
   */
  onSavepoint(hook: () => void): void {
    this.savepointHooks.push(hook);
  }

  /**
   * Runs `fn` in the current batch and resolves with its result once the
   * batch has committed.
   * @throws (rejects) whatever `fn` throws (its changes rolled back), the
   *   COMMIT's error, or ClosedError after close().
   */
  run<T>(fn: () => T): Promise<T> {
    if (this.closed) return Promise.reject(new ClosedError());
    if (!this.open) {
      this.begin.run();
      this.open = true;
      setImmediate(() => this.flush());
    }
    this.savepoint.run();
    for (const hook of this.savepointHooks) hook();
    let result: T;
    try {
      result = fn();
      this.release.run();
    } catch (err) {
      if (this.db.inTransaction) {
        this.rollbackTo.run();
        this.release.run();
        this.rolledBack(false);
      } else {
        // SQLite rolled the whole transaction back (I/O error, disk full):
        // nothing of this batch is durable, so nothing of it is acknowledged.
        this.failBatch(err);
      }
      return Promise.reject(err);
    }
    return new Promise<T>((resolve, reject) => {
      this.waiters.push({ resolve: () => resolve(result), reject });
    });
  }

  /** Commits the open batch now, if there is one, and settles its promises. */
  flush(): void {
    if (!this.open) return;
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
      for (const w of waiters) w.reject(err);
      return;
    }
    if (this.committedHooks.length > 0) {
      const ms = performance.now() - started;
      for (const hook of this.committedHooks) hook(waiters.length, ms);
    }
    for (const w of waiters) w.resolve();
  }

  /** Commits what is pending and refuses further work (graceful stop). */
  close(): void {
    this.flush();
    this.closed = true;
  }

  private failBatch(err: unknown): void {
    const waiters = this.waiters;
    this.waiters = [];
    this.open = false;
    this.rolledBack(true);
    for (const w of waiters) w.reject(err);
  }

  private rolledBack(whole: boolean): void {
    for (const hook of this.rollbackHooks) hook(whole);
  }
}
