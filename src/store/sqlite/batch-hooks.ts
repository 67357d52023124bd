/**
 * What engine-side buffers (the audit chain's rows) hook into: whether a
 * batch is open, and its savepoint, pre-commit and rollback moments.
 */
export interface BatchEvents {
  readonly inBatch: boolean;
  onSavepoint(hook: () => void): void;
  onBeforeCommit(hook: () => void): void;
  onRollback(hook: (whole: boolean) => void): void;
}

/**
 * The hook points of a group-commit batch (group-commit.ts): listeners for
 * each request's SAVEPOINT, the moment before COMMIT, a committed batch and
 * a rollback. GroupCommit extends this and calls the hooks; engine-side
 * buffers (the audit chain's rows) and metrics register here.
 */
export abstract class BatchHooks implements BatchEvents {
  protected readonly beforeCommitHooks: (() => void)[] = [];
  protected readonly rollbackHooks: ((whole: boolean) => void)[] = [];
  protected readonly savepointHooks: (() => void)[] = [];
  protected readonly committedHooks: ((batchSize: number, ms: number) => void)[] = [];

  /** True while a batch is open (from the turn's first unit of work to its COMMIT). */
  abstract get inBatch(): boolean;

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

  /**
   * Registers a listener called as each request's SAVEPOINT opens, before its
   * function runs: work buffered in memory for the batch (audit rows) marks
   * where the request's part starts, so a rollback to the savepoint
   * (onRollback with whole = false) can drop exactly that part.
   */
  onSavepoint(hook: () => void): void {
    this.savepointHooks.push(hook);
  }
}
