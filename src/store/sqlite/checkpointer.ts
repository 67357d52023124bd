import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type { Db } from "./db.js";
import type { GroupCommit } from "./group-commit.js";
import { BUSY_TIMEOUT_MS } from "./db.js";

/** Least time between a commit and the checkpoint that copies it into the main file, milliseconds. */
export const CHECKPOINT_DELAY_MS = 100;
/**
 * `wal_autocheckpoint` of the serving connection while the checkpointer runs,
 * pages: a fallback only, should the thread fall behind (SQLite's default,
 * 1000 pages, is what the connection keeps without the thread).
 */
export const FALLBACK_AUTOCHECKPOINT_PAGES = 20_000;

/**
 * The thread's code (CommonJS, `eval`): its own connection to the file, and a
 * PASSIVE checkpoint CHECKPOINT_DELAY_MS after the first commit it is told
 * of. PASSIVE never waits for the writer or a reader: it copies what it can.
 */
const THREAD_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma("synchronous = FULL");
db.pragma("busy_timeout = " + workerData.busyTimeoutMs);
const checkpoint = db.prepare("PRAGMA wal_checkpoint(PASSIVE)");
let timer;
let stopped = false;
parentPort.on("message", (message) => {
  if (stopped) return;
  if (message === "stop") {
    stopped = true;
    clearTimeout(timer);
    db.close();
    parentPort.postMessage("stopped");
    parentPort.close();
  } else if (timer === undefined) {
    timer = setTimeout(() => {
      timer = undefined;
      try { checkpoint.get(); } catch {}
      parentPort.postMessage("checkpointed");
    }, workerData.delayMs);
  }
});
parentPort.postMessage("ready");
`;

/** A running checkpointer: stop() ends its thread and gives checkpoints back to the connection. */
export interface Checkpointer {
  /** Ends the thread (its connection closed); resolves once it has exited. */
  stop(): Promise<void>;
}

/**
 * Moves the WAL checkpoints of a file database off the event loop. SQLite's
 * automatic checkpoint runs inside the COMMIT that crosses 1000 WAL pages, on
 * the thread that commits: it copies every page of the WAL into the main file
 * and fsyncs it, and every request of the loop waits meanwhile. Reads of
 * random keys dirty a page of `secrets` (the read count) and one of
 * `audit_span` per request, about ten times the WAL pages of reads of one key,
 * so that checkpoint came ten times as often: the p99 of reads across many
 * keys (docs/performance.md, "Reads at scale").
 *
 * A worker thread with its own connection runs a PASSIVE checkpoint
 * CHECKPOINT_DELAY_MS after a commit (never waiting for the writer), and the
 * serving connection's automatic checkpoint is raised to
 * FALLBACK_AUTOCHECKPOINT_PAGES once the thread is ready. If the thread
 * cannot start (no driver to load, as in the single-file executable), the
 * connection keeps SQLite's automatic checkpoint: nothing else changes. The
 * WAL scrub (wal-scrub.ts) still runs its TRUNCATE checkpoints on the loop.
 *
 * @param db the serving connection (WAL mode, a file).
 * @param file the database file's path.
 * @param tx the connection's group commit: each committed batch asks for a checkpoint.
 * @returns the checkpointer, to stop before the connection closes.
 */
export function startCheckpointer(db: Db, file: string, tx: Pick<GroupCommit<unknown>, "onCommitted">): Checkpointer {
  let driver: string;
  try {
    driver = createRequire(import.meta.url).resolve("better-sqlite3");
  } catch {
    return { stop: () => Promise.resolve() };
  }
  const worker = new Worker(THREAD_SOURCE, {
    eval: true,
    workerData: { driver, file, delayMs: CHECKPOINT_DELAY_MS, busyTimeoutMs: BUSY_TIMEOUT_MS },
  });
  let ready = false;
  /** A commit is not yet in a checkpoint the thread was asked for. */
  let pending = false;
  /** The thread was asked for a checkpoint and has not reported it. */
  let asked = false;
  const ask = (): void => {
    pending = false;
    asked = true;
    worker.postMessage("commit");
  };
  let exited = false;
  const exit = new Promise<void>((resolve) => worker.once("exit", resolve)).then(() => {
    exited = true;
    ready = false;
  });
  worker.on("error", () => {
    // The connection checkpoints for itself again.
    if (db.open) db.pragma("wal_autocheckpoint = 1000");
  });
  worker.on("message", (message: unknown) => {
    if (message === "ready" && db.open) {
      ready = true;
      db.pragma(`wal_autocheckpoint = ${FALLBACK_AUTOCHECKPOINT_PAGES}`);
    } else if (message === "checkpointed") {
      asked = false;
    }
    if (ready && pending && !asked) ask();
  });
  worker.unref();
  tx.onCommitted(() => {
    // One message per checkpoint, not per commit: commits meanwhile wait for the next one.
    pending = true;
    if (ready && !asked && !exited) ask();
  });
  return {
    stop: async () => {
      if (exited) return;
      if (db.open) db.pragma("wal_autocheckpoint = 1000");
      ready = false;
      worker.postMessage("stop");
      await exit;
    },
  };
}
