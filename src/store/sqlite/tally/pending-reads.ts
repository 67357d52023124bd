/**
 * A write-back takes the pending secrets of whole id ranges of 2^GROUP_BITS
 * ids: about one leaf of `secret_reads` (about 290 rows a page), so the
 * pending secrets of one range cost one page written, not one each.
 */
export const GROUP_BITS = 8;

/**
 * What a live secret's stored pair does not hold yet: its read count and its
 * key's newest audit row (`read_count`, `audit_head`; undefined: as stored),
 * the lowest audit row id that may be missing from it (`since`), and when it
 * became pending (`at`, Unix milliseconds).
 */
export interface Pending {
  readonly id: number;
  readCount: number | undefined;
  head: number | undefined;
  since: number;
  at: number;
}

/**
 * The read tally's pending entries (read-tally.ts): by id, by id range
 * (GROUP_BITS), and oldest first.
 *
 * The age order is a queue of its own, not a Map's insertion order: a Map's
 * first entry is found by skipping the entries deleted before it, which grows
 * with the write-back deleting the oldest (docs/performance.md). The
 * queue keeps entries no longer pending until its head passes them; an entry
 * counts only while the map holds that same object for its id. Entries are
 * added with nondecreasing `since`; one put back after a rollback goes to the
 * end, and the queue is rebuilt by `since` before the oldest is next taken.
 */
export class PendingReads {
  private readonly byId = new Map<number, Pending>();
  private readonly ranges = new Map<number, Set<number>>();
  private order: Pending[] = [];
  private orderHead = 0;
  private ordered = true;

  /** The count of pending secrets. */
  get size(): number {
    return this.byId.size;
  }

  /** Secret `id`'s entry, or undefined. */
  get(id: number): Pending | undefined {
    return this.byId.get(id);
  }

  /** Every entry, in no particular order. */
  values(): IterableIterator<Pending> {
    return this.byId.values();
  }

  /** Adds a new entry (its `since` at or above those of the entries added before it). */
  add(entry: Pending): void {
    this.index(entry);
    this.order.push(entry);
  }

  /** Puts back an entry a rollback restores after it was forgotten: out of the age order until the next oldest(). */
  restore(entry: Pending): void {
    this.index(entry);
    this.order.push(entry);
    this.ordered = false;
  }

  /** Forgets secret `id`'s entry when it is pending. */
  drop(id: number): void {
    if (!this.byId.delete(id)) return;
    const range = id >> GROUP_BITS;
    const ids = this.ranges.get(range);
    if (ids === undefined) return;
    ids.delete(id);
    if (ids.size === 0) this.ranges.delete(range);
  }

  /** Forgets every entry. */
  clear(): void {
    this.byId.clear();
    this.ranges.clear();
    this.order = [];
    this.orderHead = 0;
    this.ordered = true;
  }

  /** The oldest entry, or undefined when none is pending. */
  oldest(): Pending | undefined {
    if (!this.ordered) {
      this.order = [...this.byId.values()].sort((a, b) => a.since - b.since);
      this.orderHead = 0;
      this.ordered = true;
    }
    const order = this.order;
    while (this.orderHead < order.length && !this.holds(order[this.orderHead] as Pending)) this.orderHead++;
    if (this.orderHead > 1024 && this.orderHead * 2 > order.length) {
      this.order = order.slice(this.orderHead);
      this.orderHead = 0;
    }
    return this.order[this.orderHead];
  }

  /**
   * Takes the entries of whole id ranges, the ranges of the oldest entries
   * first, until at least `limit` entries are taken (or none is left); they
   * are forgotten here.
   * @returns the entries taken.
   */
  takeOldestRanges(limit: number): Pending[] {
    this.oldest();
    const taken: Pending[] = [];
    for (let i = this.orderHead; i < this.order.length && taken.length < limit; i++) {
      const entry = this.order[i] as Pending;
      // Still pending: its range was not taken yet (a range taken leaves none behind).
      if (this.holds(entry)) this.takeRange(entry.id >> GROUP_BITS, taken);
    }
    return taken;
  }

  private takeRange(range: number, into: Pending[]): void {
    const ids = this.ranges.get(range);
    if (ids === undefined) return;
    for (const id of ids) {
      into.push(this.byId.get(id) as Pending);
      this.byId.delete(id);
    }
    this.ranges.delete(range);
  }

  private holds(entry: Pending): boolean {
    return this.byId.get(entry.id) === entry;
  }

  private index(entry: Pending): void {
    this.byId.set(entry.id, entry);
    const range = entry.id >> GROUP_BITS;
    const ids = this.ranges.get(range);
    if (ids === undefined) this.ranges.set(range, new Set([entry.id]));
    else ids.add(entry.id);
  }
}
