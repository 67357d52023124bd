/**
 * The statements of one unit of work that are sent without waiting for
 * their answer: BEGIN, the audit append and an expiry (statements whose
 * answer nothing in the unit reads). The pool's connections are pipelined (store/pg/pool.ts), so
 * such a statement rides the round trip of the next statement the unit
 * waits for, or of its COMMIT (docs/performance.md, "PostgreSQL").
 *
 * Nothing is acknowledged on the strength of a statement in flight: the
 * unit of work settles every tracked statement before it answers, and a
 * failed one fails the unit. PostgreSQL answers a COMMIT sent after a failed
 * statement of the same transaction with ROLLBACK (the transaction was
 * aborted), so a pipelined COMMIT never commits past a failure.
 */
export class WriteBehind {
  private pending: Promise<unknown>[] = [];
  private failure: { error: unknown } | undefined;

  /**
   * Tracks a statement already sent. Its rejection is kept (the first one
   * wins) and never goes unhandled.
   */
  track(statement: Promise<unknown>): void {
    this.pending.push(statement);
    statement.catch((error: unknown) => {
      this.failure ??= { error };
    });
  }

  /**
   * Waits for every tracked statement.
   * @throws (rejects) the first failure among them.
   */
  async settle(): Promise<void> {
    const failure = await this.settled();
    if (failure !== undefined) throw failure.error;
  }

  /**
   * Waits for every tracked statement to answer, failed or not.
   * @returns the first failure, or undefined when none failed.
   */
  async settled(): Promise<{ error: unknown } | undefined> {
    while (this.pending.length > 0) {
      const batch = this.pending;
      this.pending = [];
      await Promise.allSettled(batch);
    }
    return this.failure;
  }
}
