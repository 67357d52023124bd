// Files in dead drops (docs/performance.md, "Files"): the built server (dist/) on a fresh data directory,
// SQLite by default or PostgreSQL with BENCH_DATABASE_URL (bench/files.sh runs both), measured for
//   1. a 10 MiB file created and revealed, one at a time: sealing here, POST /secrets, POST /s/<id>/reveal,
//      opening here (milliseconds, the median of BENCH_FILE_ROUNDS);
//   2. the server's RSS (VmRSS of its process, sampled every 20 ms) idle and at its peak while 8 such
//      uploads run at once (BENCH_FILE_CONCURRENCY), each round;
//   3. p99 of small GETs (a keyed 26-byte secret, autocannon in a worker thread, 10 connections) alone, then
//      while 8 uploads run in a loop for the same time (their bodies encoded once, beforehand).
// The client runs on the same 2 cores as the server: read the figures as a baseline, not a capacity.
// Usage, after `npm run build`: node bench/files.mjs   Env: BENCH_FILE_MIB (10), BENCH_FILE_ROUNDS (5),
// BENCH_FILE_CONCURRENCY (8), BENCH_SECONDS (10), BENCH_DATABASE_URL, BENCH_JSON (a file for the raw figures),
// BENCH_NODE_ARGS (node options for the server).
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { startServer, stopServer } from "./server.mjs";

const { parseEnvelope, prepareReveal, sealFileEnvelope } = await import("../packages/client/dist/index.js");

const MIB = Number(process.env.BENCH_FILE_MIB ?? 10);
const ROUNDS = Number(process.env.BENCH_FILE_ROUNDS ?? 5);
const CONCURRENCY = Number(process.env.BENCH_FILE_CONCURRENCY ?? 8);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const DATABASE_URL = process.env.BENCH_DATABASE_URL;

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rssMiB = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024;

/** Samples the process's RSS every 20 ms while `work` runs: its peak, MiB. */
async function peakRss(pid, work) {
  let peak = rssMiB(pid);
  const timer = setInterval(() => (peak = Math.max(peak, rssMiB(pid))), 20);
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  return Math.max(peak, rssMiB(pid));
}

function cannon(options) {
  return new Promise((resolve, reject) => autocannon(options, (err, r) => (err ? reject(err) : resolve(r))));
}

const dir = mkdtempSync(join(tmpdir(), "ev-bench-files-"));
const masterKey = randomBytes(24).toString("base64url");
const env = {
  VAULT_MASTER_KEY: masterKey,
  VAULT_LOG_LEVEL: "warn",
  ...(DATABASE_URL === undefined
    ? {}
    : { VAULT_DATABASE_URL: DATABASE_URL, VAULT_ENCRYPTION_KEY: randomBytes(32).toString("hex"), VAULT_WEBHOOK_SECRET: randomBytes(24).toString("base64url") }),
};
// BENCH_NODE_ARGS: node options for the server, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" (a profile written when it stops).
const server = await startServer(join(dir, "data"), env, (process.env.BENCH_NODE_ARGS ?? "").split(" ").filter(Boolean));
const auth = { authorization: `Bearer ${masterKey}`, "content-type": "application/json" };
const bytes = new Uint8Array(MIB * 1024 * 1024);
for (let i = 0; i < bytes.length; i++) bytes[i] = i & 0xff;

/** The create body of a sealed file, encoded once: the loops below send it again and again, and this process also measures the GETs. */
const bodies = new WeakMap();
function bodyOf(sealed) {
  let body = bodies.get(sealed);
  if (body === undefined) {
    body = Buffer.from(JSON.stringify({ value: sealed.envelope, reveal_check: sealed.revealCheck, max_reads: 1 }));
    bodies.set(sealed, body);
  }
  return body;
}

/** One upload of a sealed file: its id, after the 201. */
async function upload(sealed) {
  const res = await fetch(`${server.url}/secrets`, { method: "POST", headers: auth, body: bodyOf(sealed) });
  if (res.status !== 201) throw new Error(`create answered ${res.status}: ${await res.text()}`);
  return ((await res.json()).id);
}

try {
  const engine = DATABASE_URL === undefined ? "SQLite" : "PostgreSQL";
  const out = { engine, fileMiB: MIB, rounds: ROUNDS, concurrency: CONCURRENCY };
  // 1. create and reveal, one at a time.
  const seal = [];
  const create = [];
  const reveal = [];
  const open = [];
  for (let r = 0; r < ROUNDS; r++) {
    let t = performance.now();
    const sealed = await sealFileEnvelope({ name: "bench.bin", type: "application/octet-stream", bytes });
    seal.push(performance.now() - t);
    t = performance.now();
    const id = await upload(sealed);
    create.push(performance.now() - t);
    const prepared = await prepareReveal(sealed.linkKey);
    t = performance.now();
    const res = await fetch(`${server.url}/s/${id}/reveal`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ proof: prepared.proof }) });
    const value = (await res.json()).value;
    reveal.push(performance.now() - t);
    t = performance.now();
    const opened = await prepared.openContent(parseEnvelope(value));
    open.push(performance.now() - t);
    if (typeof opened === "string" || opened.file.bytes.length !== bytes.length) throw new Error("the file did not come back");
  }
  Object.assign(out, { sealMs: median(seal), createMs: median(create), revealMs: median(reveal), openMs: median(open) });
  // 2. RSS during CONCURRENCY uploads at once (sealed beforehand: the server's work only).
  const batch = [];
  for (let i = 0; i < CONCURRENCY; i++) {
    const sealed = await sealFileEnvelope({ name: "bench.bin", type: "application/octet-stream", bytes });
    bodyOf(sealed);
    batch.push(sealed);
  }
  const idle = rssMiB(server.child.pid);
  const peaks = [];
  const batchMs = [];
  for (let r = 0; r < 3; r++) {
    const t = performance.now();
    peaks.push(await peakRss(server.child.pid, () => Promise.all(batch.map(upload))));
    batchMs.push(performance.now() - t);
  }
  Object.assign(out, { rssIdleMiB: idle, rssPeakMiB: Math.max(...peaks), rssPeaksMiB: peaks, concurrentBatchMs: median(batchMs) });
  // 3. small GETs alone, then during uploads.
  await fetch(`${server.url}/secrets`, { method: "POST", headers: auth, body: JSON.stringify({ key: "bench/small", value: "benchmark-value-0123456789" }) });
  // In a worker thread of its own: the upload loops' sending on this process's event loop does not delay its timing.
  const gets = { url: `${server.url}/secrets/bench/small`, headers: { authorization: `Bearer ${masterKey}` }, connections: 10, duration: SECONDS, workers: 1 };
  const alone = await cannon(gets);
  let running = true;
  let uploads = 0;
  const loop = async (sealed) => {
    while (running) {
      await upload(sealed);
      uploads++;
    }
  };
  const loads = batch.map(loop);
  const during = await cannon(gets);
  running = false;
  await Promise.all(loads);
  Object.assign(out, {
    getAlone: { reqPerSec: alone.requests.average, p50Ms: alone.latency.p50, p99Ms: alone.latency.p99, non2xx: alone.non2xx },
    getDuringUploads: { reqPerSec: during.requests.average, p50Ms: during.latency.p50, p99Ms: during.latency.p99, non2xx: during.non2xx, uploads },
  });
  const f = (n) => Math.round(n);
  console.log(`${engine}, a ${MIB} MiB file (median of ${ROUNDS}): seal ${f(out.sealMs)} ms, create ${f(out.createMs)} ms, reveal ${f(out.revealMs)} ms, open ${f(out.openMs)} ms`);
  console.log(`RSS: idle ${f(idle)} MiB, peak ${f(out.rssPeakMiB)} MiB during ${CONCURRENCY} concurrent uploads (rounds: ${peaks.map(f).join(", ")} MiB; ${f(out.concurrentBatchMs)} ms per batch)`);
  console.log(`small GETs: alone p99 ${alone.latency.p99} ms (${f(alone.requests.average)} req/s); during uploads p99 ${during.latency.p99} ms (${f(during.requests.average)} req/s, ${uploads} uploads meanwhile)`);
  if (process.env.BENCH_JSON) writeFileSync(process.env.BENCH_JSON, JSON.stringify(out, null, 2));
} finally {
  await stopServer(server.child);
  rmSync(dir, { recursive: true, force: true });
}
