import { statSync } from "node:fs";

/** Least time between two stat() calls of the database path, milliseconds. */
export const DB_FILE_CHECK_EVERY_MS = 1000;

/**
 * Notices when the database file the process has open is deleted or
 * replaced under it (an operator's `rm`, a restore copied over it, a
 * volume remounted). SQLite keeps writing to the open descriptor, so
 * without this check writes would be acknowledged into a file that no
 * longer is at the path and would be lost at the next start.
 *
 * Remembers the file's device and inode at construction and compares them
 * with a stat() of the path, at most once per DB_FILE_CHECK_EVERY_MS; the
 * answer in between is the last one. Once the file is found gone the answer
 * stays false: the process must be restarted on the file that is there now.
 */
export class DbFileWatch {
  private readonly dev: number;
  private readonly ino: number;
  private checkedAt = Number.NEGATIVE_INFINITY;
  private ok = true;

  /**
   * @param path the database file, e.g. `<data dir>/vault.db`.
   * @param now monotonic enough clock, milliseconds (Date.now).
   * @throws the stat() error when the file does not exist at construction.
   */
  constructor(
    readonly path: string,
    private readonly now: () => number = Date.now,
  ) {
    const st = statSync(path);
    this.dev = st.dev;
    this.ino = st.ino;
  }

  /** True while the path still names the file that was opened (stat at most once a second). */
  present(): boolean {
    if (!this.ok) return false;
    const now = this.now();
    if (now - this.checkedAt < DB_FILE_CHECK_EVERY_MS) return this.ok;
    this.checkedAt = now;
    const st = statSync(this.path, { throwIfNoEntry: false });
    this.ok = st !== undefined && st.dev === this.dev && st.ino === this.ino;
    return this.ok;
  }
}
