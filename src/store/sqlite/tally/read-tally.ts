import type { Database as Db } from "better-sqlite3";
import type { BatchEvents } from "../batch-hooks.js";
import { metaUpsert } from "../../sql/meta.js";
import { paramsOf, render } from "../../sql/template.js";
import { PendingReads } from "./pending-reads.js";
import type { Pending } from "./pending-reads.js";
import { SecretReads } from "./secret-reads.js";

/**
 * The meta row holding an audit id at or below which every audit row is
 * reflected in the secrets' pairs (`read_count`, `audit_head`, in
 * `secret_reads` or the secrets' rows): the read tally's write-back mark
 * (schema.sql versions 14 and 15; read-replay.ts replays the rows above it).
 */
export const READS_FLUSHED_META = "reads_flushed";

/** The text of the write-back mark's upsert (metaUpsert), its values bound by setFlushed(). */
const FLUSHED_UPSERT = render(metaUpsert(READS_FLUSHED_META, ""), "sqlite");

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
 *   chain (store/sqlite/audit/key-chain.ts chainedKey) moves the count
 *   here, and the key chain moves the head here.
 * - A secret's stored pair is its `secret_reads` row when it has one, else
 *   its own row's (schema.sql version 15); the stores' reads join the two.
 *   A write-back writes the pair into `secret_reads` (secret-reads.ts),
 *   whose rows are small and keyed by id: it takes the pending secrets of
 *   whole id ranges (pending-reads.ts GROUP_BITS), one leaf each, so at a
 *   million secrets read at random a page written carries several reads,
 *   not one.
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
  private readonly pending = new PendingReads();
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
  private readonly touched = new Set<number>();
  /** The newest audit row id before the open batch's rows: every row the batch writes is above it. */
  private floor = 0;
  /** The floor once the open batch commits. */
  private nextFloor = 0;
  private readonly stored: SecretReads;
  private readonly q;

  /**
   * @param db the vault's database.
   * @param now the clock, Unix milliseconds.
   */
  constructor(
    db: Db,
    private readonly now: () => number = () => Date.now(),
  ) {
    this.stored = new SecretReads(db);
    this.q = {
      writeRow: db.prepare<[number | null, number | null, number]>(
        "UPDATE secrets SET read_count = coalesce(?, read_count), audit_head = coalesce(?, audit_head) WHERE id = ?",
      ),
      lastAudit: db.prepare<[], { id: number | null }>("SELECT max(id) AS id FROM audit"),
      // The meta table's one upsert (store/sql/meta.ts), rendered once for SQLite.
      setFlushed: db.prepare(FLUSHED_UPSERT.text),
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
      for (const entry of this.pending.values()) this.stored.write(entry.id, entry.readCount, entry.head);
      this.pending.clear();
      this.setFlushed(this.q.lastAudit.get()?.id ?? 0);
    }).immediate();
    this.journal = [];
  }

  /**
   * Writes secret `id`'s `secret_reads` row (deleted) and pending pair into
   * its row, the pending one winning, and forgets the pending pair.
   */
  private fold(id: number, entry: Pending | undefined): void {
    const side = this.stored.get(id);
    if (side !== undefined) {
      this.q.writeRow.run(entry?.readCount ?? side.read_count, entry?.head ?? side.audit_head, id);
      this.stored.drop(id);
    } else if (entry !== undefined) {
      this.q.writeRow.run(entry.readCount ?? null, entry.head ?? null, id);
    }
    if (entry === undefined) return;
    this.remember(id, entry);
    this.pending.drop(id);
  }

  /** Moves the write-back mark (meta `reads_flushed`) to audit id `auditId`. */
  private setFlushed(auditId: number): void {
    this.q.setFlushed.run(paramsOf(metaUpsert(READS_FLUSHED_META, String(auditId)), FLUSHED_UPSERT));
  }

  private beforeCommit(): void {
    this.writeBack();
    this.nextFloor = this.q.lastAudit.get()?.id ?? 0;
  }

  /**
   * Writes the rows the batch wrote again with their pairs (their pages are
   * dirty already), and when due writes back the id ranges of the oldest
   * pending secrets into `secret_reads`, with the meta mark.
   */
  private writeBack(): void {
    for (const id of this.touched) {
      // A savepoint rolled back since the row was settled may have brought its `secret_reads` row back.
      const entry = this.pending.get(id);
      if (entry !== undefined) this.fold(id, entry);
    }
    this.touched.clear();
    const oldest = this.pending.oldest();
    if (oldest === undefined) return;
    const over = this.pending.size - MAX_PENDING;
    if (over <= 0 && this.now() - oldest.at < FLUSH_INTERVAL_MS) return;
    // Above MAX_PENDING, the excess too: the tally stays bounded whatever a batch carries.
    const taken = this.pending.takeOldestRanges(FLUSH_CHUNK + Math.max(0, over));
    // Journaled before the first write: a write that fails rolls the batch back, and every entry comes back.
    for (const entry of taken) this.remember(entry.id, entry);
    for (const entry of taken) this.stored.write(entry.id, entry.readCount, entry.head);
    const next = this.pending.oldest();
    this.setFlushed(next === undefined ? (this.q.lastAudit.get()?.id ?? 0) : next.since - 1);
  }

  /**
   * The entry of secret `id`, made pending if it was not. Its `since` is the
   * lowest id a row of the open batch can have, so entries made later never
   * have a lower one (PendingReads keeps them oldest first).
   */
  private change(id: number): Pending {
    const entry = this.pending.get(id);
    this.remember(id, entry);
    if (entry !== undefined) return entry;
    const fresh: Pending = { id, readCount: undefined, head: undefined, since: this.floor + 1, at: this.now() };
    this.pending.add(fresh);
    return fresh;
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
      if (before === undefined) this.pending.drop(id);
      else if (now !== undefined) Object.assign(now, before);
      // An entry written back or settled in the rolled-back part: back, out of the age order.
      else this.pending.restore(before);
    }
    this.journal.length = to;
    if (whole) {
      this.mark = 0;
      this.touched.clear();
    }
  }
}
