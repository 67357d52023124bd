/**
 * The read tally of the SQLite engine, behind one entry (docs/performance.md,
 * "Reads at scale"; docs/architecture.md): read counts and key heads written
 * behind (read-tally.ts, its pending entries in pending-reads.ts), the
 * `secret_reads` table they are written back into (secret-reads.ts) and the
 * replay of a crash's reads at open (read-replay.ts). Code outside
 * src/store/sqlite/tally/ imports this file only (.dependency-cruiser.cjs,
 * rule "tally-behind-its-index").
 */

export { FLUSH_CHUNK, FLUSH_INTERVAL_MS, MAX_PENDING, READS_FLUSHED_META, ReadTally } from "./read-tally.js";
export type { TallyBatch } from "./read-tally.js";
export { GROUP_BITS } from "./pending-reads.js";
export { STORED_AUDIT_HEAD, STORED_READ_COUNT, secretsWithReads } from "./secret-reads.js";
export { readsToReplay, replayReads } from "./read-replay.js";
