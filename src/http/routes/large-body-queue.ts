/**
 * Large bodies handled one at a time (docs/performance.md, "Files"): a
 * create of a file (a body over 1 MiB, up to about 14 MB for 10 MiB) spends
 * tens of milliseconds at a time on the event loop (decoding and parsing
 * its JSON, validating, encrypting at rest, and on SQLite the insert and the
 * batch's COMMIT). Several at once queue all that work ahead of every small
 * request that arrives meanwhile. Held in a first-come queue, only one large
 * body is being worked on at any moment, so a small request waits behind
 * one of them at most, never behind all.
 *
 * The queue is taken once the body has been read, not before: reading is
 * cheap (the socket's chunks), and a slow sender then holds nobody up. It
 * covers the body's parsing and checks (route(), declare.ts), the work
 * that would otherwise run for several bodies back to back; storing it is
 * the unit of work's (on SQLite a batch of its own: RunOptions.alone), so
 * on PostgreSQL one file's round trips overlap the next one's parsing.
 */
export class LargeBodyQueue {
  /** Whether a large body holds the turn. */
  private busy = false;
  private readonly waiting: (() => void)[] = [];

  /** Bodies waiting for their turn (diagnostics and tests). */
  get queued(): number {
    return this.waiting.length;
  }

  /**
   * Waits for the turn: at once when nobody holds it, else after those
   * queued before (first come, first served).
   * @returns the release, to call exactly once when the work is done (a
   *   second call does nothing).
   */
  async acquire(): Promise<() => void> {
    if (this.busy) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.busy = true;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next === undefined) this.busy = false;
      // Handed over on a turn of its own: the small requests that arrived meanwhile are read first.
      else setImmediate(next);
    };
  }
}
