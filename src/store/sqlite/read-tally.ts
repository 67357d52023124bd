import type { Database as Db } from "better-sqlite3";
import type { BatchEvents } from "./batch-hooks.js";

/**
 * The meta row holding an audit id at or below which every audit row is
 * reflected in the secrets' pairs (`read_count`, `audit_head`, in
 * `secret_reads` or the secrets' rows): the read tally's write-back mark
 * (schema.sql versions 14 and 15; read-replay.ts replays the rows above it).
 */
export const READS_FLUSHED_META = "reads_flushed";

/**
 * What a live secret's stored pair does not hold yet: its read count and its
 * key's newest audit row (`read_count`, `audit_head`), the lowest audit row
 * id that may be missing from it (`since`), and when it became pending (`at`,
 * Unix milliseconds).
 */
interface Pending {
  readonly id: number;
  readCount: number | undefined;
  head: number | undefined;
  since: number;
  at: number;
}

/** A `secret_reads` row: a secret's written-back pair. */
interface SideRow {
  read_count: number;
  audit_head: number | null;
}

/**
 * The secrets joined with their written-back pairs, for a FROM clause: `s`
 * the secret's row, `r` its `secret_reads` row if it has one, whose pair
 * supersedes the row's (schema.sql version 15).
 * @param index an index of `secrets` the query must use (INDEXED BY); none when omitted.
 */
export function secretsWithReads(index?: string): string {
  return `secrets AS s${index === undefined ? "" : ` INDEXED BY ${index}`} LEFT JOIN secret_reads AS r ON r.id = s.id`;
}

/** A secret's stored read count in a query FROM secretsWithReads(). */
export const STORED_READ_COUNT = "coalesce(r.read_count, s.read_count)";

/** The group commit as the tally uses it: its batch moments and committed batches. */
export interface TallyBatch extends BatchEvents {
  onCommitted(hook: (batchSize: number, ms: number) => void): void;
}

/** More pending secrets than this: the batch writes the oldest back, and the excess (bounds the memory, about 100 bytes each). */
export const MAX_PENDING = 32_768;
/** Rows a batch writes back at least when the tally is due, their id ranges' other pending rows with them. */
export const FLUSH_CHUNK = 128;
/**
 * How long a read count may stay only in the tally and the audit log,
 * milliseconds: it bounds the audit rows a restart after a crash replays.
 */
export const FLUSH_INTERVAL_MS = 5000;
/**
 * A write-back takes the pending secrets of whole id ranges of 2^GROUP_BITS
 * ids: about one leaf of `secret_reads` (about 290 rows a page), so the
 * pending secrets of one range cost one page written, not one each.
 */
export const GROUP_BITS = 8;

/**
 * The read counts and audit heads of live secrets that their stored pairs
 * do not hold yet: a write-behind tally (docs/performance.md, "Reads at
 * scale").
 *
 * A counted read dirtied its secret's leaf of `secrets` in every COMMIT,
 * a page of the WAL and then of the checkpoint per secret read: reading
 * 1,000 keys at random cost a COMMIT four times the pages of reading one.
 * The audit log already records every counted read durably, in the same
 * transaction (a `secret.read` row of the secret's (scope, key), appended
 * on the table's last page), so it is the redo log of the count:
 *
 * - Inside a batch, a counted read of a secret whose key has an audit
 *   chain (store/sqlite/audit-key-chain.ts chainedKey) moves the count
 *   here, and the key chain moves the head here.
 * - A secret's stored pair is its `secret_reads` row when it has one, else
 *   its own row's (schema.sql version 15); the stores' reads join the two.
 *   A write-back writes the pair into `secret_reads`, whose rows are small
 *   and keyed by id: it takes the pending secrets of whole id ranges
 *   (GROUP_BITS), one leaf each, so at a million secrets read at random a
 *   page written carries several reads, not one.
 * - A stored pair is always consistent: its read_count counts exactly the
 *   reads whose audit rows are at or below its audit_head. A write-back
 *   writes both; a change of the row (patch, replace, seal, expire, remove)
 *   first folds the `secret_reads` row and the tally's pair into the row
 *   (`settle`), and a row written by a batch is written again with its new
 *   head before that COMMIT (`touch`).
 * - Meta `reads_flushed` is an audit id at or below which every audit row is
 *   reflected in the stored pairs. After a crash, read-replay.ts replays
 *   the audit rows above it: each row above a live secret's audit_head
 *   moves the head, each `secret.read` row adds a read. No acknowledged
 *   read is lost and none is counted twice.
 * - A write-back is due when more than MAX_PENDING secrets are pending, or
 *   when the oldest became pending FLUSH_INTERVAL_MS ago; a batch then
 *   writes back the id ranges of its FLUSH_CHUNK oldest (and of the excess
 *   over MAX_PENDING), so no COMMIT carries a burst.
 * - A rolled-back savepoint or batch undoes its changes here (a journal of
 *   the entries as they were); SQLite undoes the rows.
 * - Outside a batch (tools, a store not attached to a group commit) nothing
 *   is deferred: the stores write the row at once.
 */
export class ReadTally {
  /** Pending secrets by id. */
  private readonly pending = new Map<number, Pending>();
  /**
   * The pending entries oldest first, from `orderHead` on, with entries no
   * longer pending among them (skipped: `pending` holds another object, or
   * none, for their id). An entry's `since` never decreases along it, see
   * `ordered`. Not the map's own order: a Map's first entry is found by
   * skipping the entries deleted before it, about 11 us at 32,768 pending
   * with the write-back deleting the oldest (measured).
   */
  private order: Pending[] = [];
  private orderHead = 0;
  /** The ids of `pending` by id range (id >> GROUP_BITS). */
  private readonly ranges = new Map<number, Set<number>>();
  /** The entries as they were before each change of the open batch, newest last: [id, entry or undefined]. */
  private journal: [number, Pending | undefined][] = [];
  private mark = 0;
  private batch: TallyBatch | undefined;
  /**
   * True from a batch's first savepoint until its COMMIT or rollback, its
   * pre-commit hooks included (where the group commit's own inBatch is
   * already false).
   */
  private open = false;
  /** False after a rollback put back a forgotten entry at the end of `order`: it is rebuilt by `since` before its first entry is taken as the oldest. */
  private ordered = true;
  private readonly touched = new Set<number>();
  /** The newest audit row id before the open batch's rows: every row the batch writes is above it. */
  private floor = 0;
  /** The floor once the open batch commits. */
  private nextFloor = 0;
  private readonly q;

  /**
   * @param db the vault's database.
   * @param now the clock, Unix milliseconds.
   */
  constructor(
    db: Db,
    private readonly now: () => number = () => Date.now(),
  ) {
    this.q = {
      writeRow: db.prepare<[number | null, number | null, number]>(
        "UPDATE secrets SET read_count = coalesce(?, read_count), audit_head = coalesce(?, audit_head) WHERE id = ?",
      ),
      side: db.prepare<[number], SideRow>("SELECT read_count, audit_head FROM secret_reads WHERE id = ?"),
      dropSide: db.prepare<[number]>("DELETE FROM secret_reads WHERE id = ?"),
      // A whole pair: no page of `secrets` is read.
      writeSide: db.prepare<[number, number, number]>(
        `INSERT INTO secret_reads (id, read_count, audit_head) VALUES (?, ?, ?)
           ON CONFLICT (id) DO UPDATE SET read_count = excluded.read_count, audit_head = excluded.audit_head`,
      ),
      // Half a pair (a head moved without a read, or the reverse): the other half as stored.
      mergeSide: db.prepare<[number | null, number | null, number]>(
        `INSERT INTO secret_reads (id, read_count, audit_head)
           SELECT s.id, coalesce(?, r.read_count, s.read_count), coalesce(?, r.audit_head, s.audit_head)
             FROM secrets s LEFT JOIN secret_reads r ON r.id = s.id WHERE s.id = ?
           ON CONFLICT (id) DO UPDATE SET read_count = excluded.read_count, audit_head = excluded.audit_head`,
      ),
      lastAudit: db.prepare<[], { id: number | null }>("SELECT max(id) AS id FROM audit"),
      setFlushed: db.prepare<[string, string]>(
        "INSERT INTO meta (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value",
      ),
    };
  }

  /**
   * Ties the tally to the group commit. Register it after the audit store
   * (SqliteAuditStore.attach): its pre-commit hook must see the batch's
   * audit rows inserted and their heads moved.
   */
  attach(tx: TallyBatch): void {
    this.batch = tx;
    this.floor = this.q.lastAudit.get()?.id ?? 0;
    tx.onSavepoint(() => {
      this.open = true;
      this.mark = this.journal.length;
    });
    tx.onRollback((whole) => {
      this.undo(whole ? 0 : this.mark, whole);
      if (whole) this.open = false;
    });
    tx.onBeforeCommit(() => this.beforeCommit());
    tx.onCommitted(() => {
      this.open = false;
      this.floor = this.nextFloor;
      this.journal = [];
      this.mark = 0;
    });
  }

  /** True when changes may be deferred: attached, and inside a batch (its pre-commit hooks included). */
  get active(): boolean {
    return this.open;
  }

  /** How many secrets are pending (metrics, tests). */
  get size(): number {
    return this.pending.size;
  }

  /** The read count of secret `id`: the tally's, else `stored` (its stored pair's). */
  readCount(id: number, stored: number): number {
    if (this.pending.size === 0) return stored;
    return this.pending.get(id)?.readCount ?? stored;
  }

  /** The newest audit row of secret `id`'s key: the tally's, else `stored` (its stored pair's audit_head). */
  head(id: number, stored: number | null): number | null {
    if (this.pending.size === 0) return stored;
    return this.pending.get(id)?.head ?? stored;
  }

  /**
   * Records the count of secret `id` after a read (only while `active`):
   * its `secret.read` row is one of the open batch's.
   */
  setReadCount(id: number, readCount: number): void {
    this.change(id).readCount = readCount;
  }

  /** Records the newest audit row of secret `id`'s key, one of the open batch's (only while `active`). */
  setHead(id: number, head: number): void {
    this.change(id).head = head;
  }

  /**
   * Writes secret `id`'s stored pair (its `secret_reads` row, deleted) and
   * pending pair into its row and forgets them, before a change of the row
   * (patch, replace, seal, expire, remove, a compare-and-set read, a head
   * written at once), and marks the row to be written again with its head
   * before the COMMIT.
   */
  settle(id: number): void {
    if (this.batch !== undefined) this.touched.add(id);
    this.fold(id, this.pending.get(id));
  }

  /**
   * Writes secret `id`'s `secret_reads` row (deleted) and pending pair into
   * its row, the pending one winning, and forgets the pending pair.
   */
  private fold(id: number, entry: Pending | undefined): void {
    const side = this.q.side.get(id);
    if (side !== undefined) {
      this.q.writeRow.run(entry?.readCount ?? side.read_count, entry?.head ?? side.audit_head, id);
      this.q.dropSide.run(id);
    } else if (entry !== undefined) {
      this.q.writeRow.run(entry.readCount ?? null, entry.head ?? null, id);
    }
    if (entry === undefined) return;
    this.remember(id, entry);
    this.drop(id);
  }

  /** Marks a row the batch wrote (an insert): written again with its head before the COMMIT. */
  touch(id: number): void {
    if (this.batch !== undefined) this.touched.add(id);
  }

  /**
   * Writes back every pending secret, and moves the meta mark to the last
   * audit row, outside a batch (a graceful stop, after the group commit's
   * last COMMIT): the file then has no read to replay.
   * @throws whatever SQLite throws (a full disk): the counts stay in the
   *   audit log, and the next open replays them (SqliteEngine.close logs it).
   */
  flushAll(db: Db): void {
    db.transaction(() => {
      for (const [id, entry] of this.pending) this.writeSide(id, entry);
      this.pending.clear();
      this.ranges.clear();
      this.order = [];
      this.orderHead = 0;
      this.q.setFlushed.run(READS_FLUSHED_META, String(this.q.lastAudit.get()?.id ?? 0));
    }).immediate();
    this.journal = [];
  }

  private beforeCommit(): void {
    this.writeBack();
    this.nextFloor = this.q.lastAudit.get()?.id ?? 0;
  }

  /**
   * Writes the rows the batch wrote again with their pairs (their pages are
   * dirty anyway), and when due writes back the id ranges of the oldest
   * pending secrets into `secret_reads`, with the meta mark.
   */
  private writeBack(): void {
    for (const id of this.touched) {
      // A savepoint rolled back since the row was settled may have brought its `secret_reads` row back.
      const entry = this.pending.get(id);
      if (entry !== undefined) this.fold(id, entry);
    }
    this.touched.clear();
    const oldest = this.oldest();
    if (oldest === undefined) return;
    const over = this.pending.size - MAX_PENDING;
    if (over <= 0 && this.now() - oldest.at < FLUSH_INTERVAL_MS) return;
    // Above MAX_PENDING, the excess too: however many reads a batch carries, the tally stays bounded.
    const limit = FLUSH_CHUNK + Math.max(0, over);
    let taken = 0;
    for (let i = this.orderHead; i < this.order.length && taken < limit; i++) {
      const entry = this.order[i] as Pending;
      // An entry still pending: its range was not written back yet (a range written back leaves none behind).
      if (this.pending.get(entry.id) === entry) taken += this.writeBackRange(entry.id >> GROUP_BITS);
    }
    this.q.setFlushed.run(READS_FLUSHED_META, String(this.flushedMark()));
  }

  /** Writes back the pending secrets of one id range into `secret_reads`. @returns how many. */
  private writeBackRange(range: number): number {
    const ids = this.ranges.get(range);
    if (ids === undefined) return 0;
    const n = ids.size;
    for (const id of ids) {
      const entry = this.pending.get(id) as Pending;
      this.writeSide(id, entry);
      this.remember(id, entry);
      this.pending.delete(id);
    }
    this.ranges.delete(range);
    return n;
  }

  /** The oldest pending entry (the first still pending in `order`), or undefined. */
  private oldest(): Pending | undefined {
    if (!this.ordered) {
      this.order = [...this.pending.values()].sort((a, b) => a.since - b.since);
      this.orderHead = 0;
      this.ordered = true;
    }
    const order = this.order;
    while (this.orderHead < order.length) {
      const entry = order[this.orderHead] as Pending;
      if (this.pending.get(entry.id) === entry) break;
      this.orderHead++;
    }
    if (this.orderHead > 1024 && this.orderHead * 2 > order.length) {
      this.order = order.slice(this.orderHead);
      this.orderHead = 0;
    }
    return this.order[this.orderHead];
  }

  /** An audit id at or below which every row is in the stored pairs: below the oldest pending row. */
  private flushedMark(): number {
    const oldest = this.oldest();
    return oldest === undefined ? (this.q.lastAudit.get()?.id ?? 0) : oldest.since - 1;
  }

  /** Writes a pending pair into `secret_reads` (a field the tally does not hold stays as stored). */
  private writeSide(id: number, entry: Pending): void {
    if (entry.readCount !== undefined && entry.head !== undefined) this.q.writeSide.run(id, entry.readCount, entry.head);
    else this.q.mergeSide.run(entry.readCount ?? null, entry.head ?? null, id);
  }

  /**
   * The entry of secret `id`, made pending if it was not. Its `since` is the
   * lowest id a row of the open batch can have, so entries made later never
   * have a lower one and the first entry of `order` still pending is the
   * oldest.
   */
  private change(id: number): Pending {
    const entry = this.pending.get(id);
    this.remember(id, entry);
    if (entry !== undefined) return entry;
    const fresh: Pending = { id, readCount: undefined, head: undefined, since: this.floor + 1, at: this.now() };
    this.put(id, fresh);
    this.order.push(fresh);
    return fresh;
  }

  /** Adds or replaces a pending entry, in `pending` and `ranges`. */
  private put(id: number, entry: Pending): void {
    this.pending.set(id, entry);
    const range = id >> GROUP_BITS;
    const ids = this.ranges.get(range);
    if (ids === undefined) this.ranges.set(range, new Set([id]));
    else ids.add(id);
  }

  /** Forgets a pending entry, in `pending` and `ranges`. */
  private drop(id: number): void {
    if (!this.pending.delete(id)) return;
    const range = id >> GROUP_BITS;
    const ids = this.ranges.get(range);
    if (ids === undefined) return;
    ids.delete(id);
    if (ids.size === 0) this.ranges.delete(range);
  }

  /** Journals an entry as it is before a change (a copy), while a batch is open. */
  private remember(id: number, entry: Pending | undefined): void {
    if (!this.open) return;
    this.journal.push([id, entry === undefined ? undefined : { ...entry }]);
  }

  /**
   * Puts back the entries as they were when the journal had `to` items. A
   * rolled-back savepoint leaves the rows the batch's other units wrote
   * marked (`touched`), even when nothing was journaled before it: their
   * heads are still written into them before the COMMIT.
   */
  private undo(to: number, whole: boolean): void {
    for (let i = this.journal.length - 1; i >= to; i--) {
      const [id, before] = this.journal[i] as [number, Pending | undefined];
      const now = this.pending.get(id);
      if (before === undefined) this.drop(id);
      else if (now !== undefined) Object.assign(now, before);
      else {
        // An entry written back or settled in the rolled-back part: back, out of `order`'s order.
        this.put(id, before);
        this.order.push(before);
        this.ordered = false;
      }
    }
    this.journal.length = to;
    if (whole) {
      this.mark = 0;
      this.touched.clear();
    }
  }
}
