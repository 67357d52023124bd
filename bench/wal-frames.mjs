// What one COMMIT writes to the WAL, by b-tree: run by hand after `npm run build`.
//   node bench/wal-frames.mjs            (env: BATCHES=100, BATCH=45 GETs per batch)
// Builds a vault in process on a temporary file database (WAL, synchronous=FULL), creates one
// secret (or, with DATA_DIR=<SCALE_DATA_DIR>/n<N>/data, a copy of a prepared data set, whose keys
// s/1..s/N are read: KEYS=N reads a random one of them per GET, KEYS=1 the hot key s/1), warms up, then runs BATCHES batches of BATCH concurrent reads through the group commit
// with automatic checkpoints off, so every COMMIT of the measured batches stays in the WAL. It then
// reads the WAL's frame headers (SQLite file format, section "WAL File Format": a 32-byte header,
// then per frame a 24-byte header whose first field is the page number and whose second is nonzero
// on a commit frame), maps each page to its table or index with the `dbstat` virtual table, and
// prints the frames per COMMIT of each b-tree and the mean wall time of a batch in microseconds.
import fs from "node:fs";
import { withLocalVault } from "./local-vault.mjs";

const BATCHES = Number(process.env.BATCHES ?? 100);
const BATCH = Number(process.env.BATCH ?? 45);
const DATA_DIR = process.env.DATA_DIR;
const KEYS = Number(process.env.KEYS ?? 1);
const pick = () => (DATA_DIR === undefined ? "bench" : `s/${1 + Math.floor(Math.random() * KEYS)}`);
await withLocalVault("wal-frames", async ({ db, file, read }) => {
  const batch = () => {
    const reads = [];
    for (let i = 0; i < BATCH; i++) reads.push(read(pick()));
    return Promise.all(reads);
  };
  for (let i = 0; i < 200; i++) await batch(); // warm-up: the b-trees grow past their first pages
  db.pragma("wal_autocheckpoint = 0");
  db.pragma("wal_checkpoint(TRUNCATE)");
  const started = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  for (let i = 0; i < BATCHES; i++) await batch();
  const batchUs = Number(process.hrtime.bigint() - started) / 1000 / BATCHES;
  const used = process.cpuUsage(cpu);
  const perRead = (us) => (us / BATCHES / BATCH).toFixed(1);

  const wal = fs.readFileSync(`${file}-wal`);
  const pageSize = wal.readUInt32BE(8);
  const salt = [wal.readUInt32BE(16), wal.readUInt32BE(20)];
  const commits = [];
  let frames = [];
  for (let off = 32; off + 24 + pageSize <= wal.length; off += 24 + pageSize) {
    if (wal.readUInt32BE(off + 8) !== salt[0] || wal.readUInt32BE(off + 12) !== salt[1]) break;
    frames.push(wal.readUInt32BE(off));
    if (wal.readUInt32BE(off + 4) !== 0) {
      commits.push(frames);
      frames = [];
    }
  }
  const owner = new Map(db.prepare("SELECT pageno, name, pagetype FROM dbstat").all().map((r) => [r.pageno, `${r.name} ${r.pagetype}`]));
  const tally = new Map();
  for (const commit of commits) {
    for (const page of commit) {
      const name = page === 1 ? "page 1 (file header)" : (owner.get(page) ?? `page ${page} (free)`);
      tally.set(name, (tally.get(name) ?? 0) + 1);
    }
  }
  const total = commits.reduce((n, c) => n + c.length, 0);
  console.log(`${commits.length} commits of ${BATCH} reads; ${(total / commits.length).toFixed(1)} WAL frames per COMMIT; ${batchUs.toFixed(0)} us per batch; CPU per GET ${perRead(used.user)} + ${perRead(used.system)} us (user + system)`);
  for (const [name, n] of [...tally].sort((a, b) => b[1] - a[1])) console.log(`${(n / commits.length).toFixed(2).padStart(6)}  ${name}`);
}, { dataDir: DATA_DIR });
