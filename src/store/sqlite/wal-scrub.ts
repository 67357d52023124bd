import type { Db } from "./db.js";
import { BUSY_TIMEOUT_MS } from "./db.js";
import type { GroupCommit } from "./group-commit.js";
import type { Work } from "../work.js";
import type { Logger } from "../../log/log.js";

/** Least time between a destroyed value and the checkpoint that scrubs the WAL, milliseconds. */
export const WAL_SCRUB_DELAY_MS = 500;
/** When a checkpoint could not finish (a reader such as `backup` holds an old snapshot), the next try, milliseconds. */
const RETRY_MS = 1000;

interface CheckpointResult {
  busy: number;
  log: number;
  checkpointed: number;
}

/**
 * Scrubs destroyed values out of the write-ahead log. A burned, deleted or
 * expired secret's ciphertext is gone from the database at COMMIT (the row is
 * removed or its ciphertext set to NULL, and `secure_delete` zeroes the freed
 * bytes of the main file), but older copies of its page stay in
 * `vault.db-wal` until later writes happen to overwrite them; with the
 * default `encryption.key` beside the data, they could be decrypted long
 * after the burn.
 *
 * Told by the vault (the engine hook valueDestroyed), inside the transaction, that a value was
 * destroyed; at most WAL_SCRUB_DELAY_MS later, off the request path and
 * between batches (never inside an open transaction), it runs
 * `PRAGMA wal_checkpoint(TRUNCATE)`, which copies the WAL's pages into the
 * main file and truncates the WAL to zero bytes. A checkpoint that a reader
 * blocks (the `backup` command's long read) is not waited for: the busy
 * timeout is 0 for it and it is tried again RETRY_MS later, so the server is
 * never blocked by it. Does nothing for `:memory:` databases.
 */
export class WalScrubber {
  private dirty = false;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly checkpoint;

  /**
   * @param deps.db the vault's database (WAL mode).
   * @param deps.tx its group commit: no checkpoint while a batch is open.
   */
  constructor(private readonly deps: { db: Db; tx: GroupCommit<Work>; log: Logger }) {
    this.checkpoint = deps.db.memory ? undefined : deps.db.prepare("PRAGMA wal_checkpoint(TRUNCATE)");
  }

  /** Schedules a scrub (at most one pending): a value was destroyed (the engine's valueDestroyed hook). */
  markDirty(): void {
    if (this.checkpoint === undefined || this.stopped) return;
    this.dirty = true;
    this.schedule(WAL_SCRUB_DELAY_MS);
  }

  /**
   * Checkpoints now if a value was destroyed since the last scrub and no
   * batch is open.
   * @returns true when the WAL was truncated (or nothing was pending).
   */
  scrubNow(): boolean {
    if (!this.dirty || this.checkpoint === undefined) return true;
    if (this.deps.tx.inBatch || this.deps.db.inTransaction) return false;
    const { db } = this.deps;
    db.pragma("busy_timeout = 0");
    try {
      const result = this.checkpoint.get() as CheckpointResult;
      if (result.busy !== 0) return false;
      this.dirty = false;
      return true;
    } catch (err) {
      this.deps.log.warn({ err }, "WAL scrub checkpoint failed; trying again");
      return false;
    } finally {
      db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    }
  }

  /** Scrubs what is pending (graceful stop) and schedules nothing more. */
  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.dirty && this.deps.db.open) this.scrubNow();
    this.stopped = true;
  }

  private schedule(ms: number): void {
    if (this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.stopped) return;
      const done = this.scrubNow();
      if (!done) this.schedule(this.deps.tx.inBatch ? 1 : RETRY_MS);
    }, ms);
    this.timer.unref();
  }
}
