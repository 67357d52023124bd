/*
 * The data dir's exclusive lock (one process at a time serves, restores,
 * rekeys or migrates a data dir): SQLite's own file lock on `vault.lock`,
 * held by store/sqlite/tools/lock.ts.
 */
export { LOCK_FILE, lockDataDir } from "../store/tools.js";
export type { DataDirLock } from "../store/tools.js";
