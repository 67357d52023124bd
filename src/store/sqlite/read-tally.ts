import type { Database as Db } from "better-sqlite3";
import type { BatchEvents } from "./batch-hooks.js";

/**
 * The meta row holding an audit id at or below which every audit row is
 * reflected in the secrets' rows (`read_count`, `audit_head`): the read
 * tally's write-back mark (schema.sql version 14; read-replay.ts replays
 * the rows above it).
 */
export const READS_FLUSHED_META = "reads_flushed";

/**
 * What a live secret's row does not hold yet: its read count and its key's
 * newest audit row (`read_count`, `audit_head`), and the lowest audit row id
 * that may be missing from the row (`since`).
 */
interface Pending {
  readCount: number | undefined;
  head: number | undefined;
  since: number;
}

/** The group commit as the tally uses it: its batch moments and committed batches. */
export interface TallyBatch extends BatchEvents {
  onCommitted(hook: (batchSize: number, ms: number) => void): void;
}

/** More pending secrets than this: the batch writes the oldest back, and the excess (bounds the memory, about 100 bytes each). */
export const MAX_PENDING = 16_384;
/** Rows a batch writes back at most when the tally is due (bounds what one COMMIT adds: a page each at worst). */
export const FLUSH_CHUNK = 128;
/** How long a read count may stay only in the tally and the audit log, milliseconds. */
export const FLUSH_INTERVAL_MS = 1000;

/**
 * The read counts and audit heads of live secrets that their rows do not
 * hold yet: a write-behind tally (docs/performance.md, "Reads at scale").
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
 *   here, and the key chain moves the head here; its row is written back
 *   later, by a batch that writes it anyway or by a write-back.
 * - A row always holds a consistent pair: its read_count counts exactly the
 *   reads whose audit rows are at or below its audit_head. A write-back
 *   writes both; a change of the row (patch, replace, seal, expire, remove)
 *   first writes the tally's pair (`settle`), and a row written by a batch is
 *   written again with its new head before that COMMIT (`touch`).
 * - Meta `reads_flushed` is an audit id at or below which every row is
 *   reflected in the secrets' rows. After a crash, read-replay.ts replays
 *   the audit rows above it: each row above a live secret's audit_head
 *   moves the head, each `secret.read` row adds a read. No acknowledged
 *   read is lost and none is counted twice.
 * - A write-back is due when more than MAX_PENDING secrets are pending, or
 *   FLUSH_INTERVAL_MS after the last time the tally was emptied; a batch
 *   then writes back its FLUSH_CHUNK oldest, so no COMMIT carries a burst.
 * - A rolled-back savepoint or batch undoes its changes here (a journal of
 *   the entries as they were).
 * - Outside a batch (tools, a store not attached to a group commit) nothing
 *   is deferred: the stores write the row at once.
 */
export class ReadTally {
  private readonly pending = new Map<number, Pending>();
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
  private nextWriteBackAt = 0;
  /** The newest audit row id before the open batch's rows: a lower bound for a read's own row, less one. */
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
      writeBack: db.prepare<[number | null, number | null, number]>(
        "UPDATE secrets SET read_count = coalesce(?, read_count), audit_head = coalesce(?, audit_head) WHERE id = ?",
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
    this.nextWriteBackAt = this.now() + FLUSH_INTERVAL_MS;
    this.floor = this.q.lastAudit.get()?.id ?? 0;
    tx.onSavepoint(() => {
      this.open = true;
      this.mark = this.journal.length;
    });
    tx.onRollback((whole) => {
      this.undo(whole ? 0 : this.mark);
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

  /** The read count of secret `id`: the tally's, else `stored` (its row's). */
  readCount(id: number, stored: number): number {
    if (this.pending.size === 0) return stored;
    return this.pending.get(id)?.readCount ?? stored;
  }

  /** The newest audit row of secret `id`'s key: the tally's, else `stored` (its row's audit_head). */
  head(id: number, stored: number | null): number | null {
    if (this.pending.size === 0) return stored;
    return this.pending.get(id)?.head ?? stored;
  }

  /**
   * Records the count of secret `id` after a read (only while `active`):
   * its `secret.read` row is one of the open batch's.
   */
  setReadCount(id: number, readCount: number): void {
    this.change(id, this.floor + 1).readCount = readCount;
  }

  /**
   * Records the newest audit row of secret `id`'s key (only while `active`).
   * @param since the id of the key's first row in this insert.
   */
  setHead(id: number, head: number, since: number): void {
    this.change(id, since).head = head;
  }

  /**
   * Writes secret `id`'s pending pair into its row and forgets it, before a
   * change of the row (patch, replace, seal, expire, remove), and marks the
   * row to be written again with its head before the COMMIT.
   */
  settle(id: number): void {
    if (this.batch !== undefined) this.touched.add(id);
    const entry = this.pending.get(id);
    if (entry === undefined) return;
    this.writeRow(id, entry);
    this.remember(id, entry);
    this.pending.delete(id);
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
      for (const [id, entry] of this.pending) this.writeRow(id, entry);
      this.pending.clear();
      this.q.setFlushed.run(READS_FLUSHED_META, String(this.q.lastAudit.get()?.id ?? 0));
    }).immediate();
    this.journal = [];
  }

  private beforeCommit(): void {
    this.writeBack();
    this.nextFloor = this.q.lastAudit.get()?.id ?? 0;
  }

  /** Writes back the rows the batch wrote, and when due the oldest pending ones with the meta mark. */
  private writeBack(): void {
    const written: number[] = [];
    for (const id of this.touched) if (this.pending.has(id)) written.push(id);
    this.touched.clear();
    const due = this.pending.size > MAX_PENDING || (this.pending.size > 0 && this.now() >= this.nextWriteBackAt);
    if (due) {
      // Above MAX_PENDING, the excess too: however many reads a batch carries, the tally stays bounded.
      const limit = FLUSH_CHUNK + Math.max(0, this.pending.size - MAX_PENDING);
      let n = 0;
      for (const id of this.pending.keys()) {
        if (n++ >= limit) break;
        written.push(id);
      }
    }
    if (written.length === 0) return;
    for (const id of written) {
      const entry = this.pending.get(id);
      if (entry === undefined) continue;
      this.writeRow(id, entry);
      this.remember(id, entry);
      this.pending.delete(id);
    }
    if (due) {
      this.q.setFlushed.run(READS_FLUSHED_META, String(this.flushedMark()));
      if (this.pending.size === 0) this.nextWriteBackAt = this.now() + FLUSH_INTERVAL_MS;
    }
  }

  /** An audit id at or below which every row is in the secrets' rows: below the oldest pending row. */
  private flushedMark(): number {
    let lowest = Number.POSITIVE_INFINITY;
    for (const entry of this.pending.values()) if (entry.since < lowest) lowest = entry.since;
    return lowest === Number.POSITIVE_INFINITY ? (this.q.lastAudit.get()?.id ?? 0) : lowest - 1;
  }

  /** Writes a pending pair into its row (a field the tally does not hold stays as stored). */
  private writeRow(id: number, entry: Pending): void {
    this.q.writeBack.run(entry.readCount ?? null, entry.head ?? null, id);
  }

  private change(id: number, since: number): Pending {
    const entry = this.pending.get(id);
    this.remember(id, entry);
    if (entry !== undefined) {
      if (since < entry.since) entry.since = since;
      return entry;
    }
    const fresh: Pending = { readCount: undefined, head: undefined, since };
    this.pending.set(id, fresh);
    return fresh;
  }

  /** Journals an entry as it is before a change (a copy), while a batch is open. */
  private remember(id: number, entry: Pending | undefined): void {
    if (!this.open) return;
    this.journal.push([id, entry === undefined ? undefined : { ...entry }]);
  }

  /** Puts back the entries as they were when the journal had `to` items. */
  private undo(to: number): void {
    for (let i = this.journal.length - 1; i >= to; i--) {
      const [id, before] = this.journal[i] as [number, Pending | undefined];
      if (before === undefined) this.pending.delete(id);
      else this.pending.set(id, before);
    }
    this.journal.length = to;
    if (to === 0) {
      this.mark = 0;
      this.touched.clear();
    }
  }
}
