#!/usr/bin/env node
// Reads at scale (docs/performance.md, "Reads at scale"): how the built server holds up from a
// thousand live secrets to a million, on SQLite (the default) or PostgreSQL (SCALE_DATABASE_URL).
//
//   npm run build && node bench/scale.mjs
//
// For each size N (SCALE_SIZES, default 1000,100000,1000000), with a license so creates are not
// capped:
//   1. prepares N live secrets (keys s/1 .. s/N, 64-byte values, no TTL): on SQLite created through
//      the built vault in process (dist/, the server stopped; HTTP would take an hour for a
//      million on two busy cores), on PostgreSQL over HTTP;
//   2. after a warm-up run of random GETs (SCALE_WARMUP_SECONDS, not counted: the JIT and the
//      caches after a start), GETs of random keys and of one hot key (wrk -t1 -c50, a Lua script
//      picks the key), alternating, SCALE_REPEAT times each, the median of each figure reported, with the
//      server's CPU time per request (steadier than req/s on a shared machine); then the first
//      page of the list (limit 100) and an audit query by key (limit 100);
//   3. the server's RSS (VmRSS, after the reads), the data directory's bytes per secret, the
//      restart time (SIGTERM, then spawn to listening);
//   4. the p99 of random-key GETs while SCALE_EXPIRING more secrets come due at once: created with
//      a 1 s TTL while the server is stopped (SQLite: in process as in 1; PostgreSQL: over HTTP
//      with VAULT_SWEEP_INTERVAL_MS=0), then a start with the sweeper's first tick a second after
//      a warm-up run of random reads, and random reads while it destroys them (the table says
//      how many it expired during that run).
// Prints one markdown table. Needs `wrk` (Debian's package). Loops are bounded; only 127.0.0.1.
//
// SCALE_DATA_DIR keeps the prepared data (SQLite only): `<dir>/n<N>/` holds the data directory and
// the settings it was made with, made once and reused by later runs; each run measures a copy of
// it, so before/after comparisons read the same rows. Without it, a temporary directory per size.
//
// Settings: SCALE_SIZES, SCALE_SECONDS (5), SCALE_WARMUP_SECONDS (3), SCALE_CONNECTIONS (50), SCALE_REPEAT (3),
// SCALE_EXPIRING (100000; 0 skips step 4), SCALE_CREATE_CONCURRENCY (64), SCALE_DATA_DIR,
// SCALE_PREPARE_ONLY=1 (with SCALE_DATA_DIR: make the data sets and stop), SCALE_ALLOW_OLD_DATA=1
// (measure kept data sets made at an older schema version, refused otherwise),
// SCALE_DATABASE_URL (an empty PostgreSQL database), SCALE_SERVER_ENV (extra environment for the
// server, "NAME=value,NAME=value": VAULT_* settings, or NODE_OPTIONS such as
// "NODE_OPTIONS=--max-semi-space-size=8", docs/operations.md "Memory").
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makeLicense, startServer, stopServer } from "./server.mjs";

const SIZES = (process.env.SCALE_SIZES ?? "1000,100000,1000000").split(",").map((s) => Number(s.trim()));
const SECONDS = Number(process.env.SCALE_SECONDS ?? 5);
const WARMUP_SECONDS = Number(process.env.SCALE_WARMUP_SECONDS ?? 3);
const CONNECTIONS = Number(process.env.SCALE_CONNECTIONS ?? 50);
const REPEAT = Math.max(1, Number(process.env.SCALE_REPEAT ?? 3));
const EXPIRING = Number(process.env.SCALE_EXPIRING ?? 100_000);
const CREATE_CONCURRENCY = Number(process.env.SCALE_CREATE_CONCURRENCY ?? 64);
const DATABASE_URL = process.env.SCALE_DATABASE_URL || undefined;
const KEEP_DIR = DATABASE_URL === undefined ? process.env.SCALE_DATA_DIR || undefined : undefined;
const SERVER_ENV = Object.fromEntries(
  (process.env.SCALE_SERVER_ENV ?? "")
    .split(",")
    .filter((s) => s.includes("="))
    .map((s) => [s.slice(0, s.indexOf("=")).trim(), s.slice(s.indexOf("=") + 1).trim()]),
);
const VALUE = randomBytes(48).toString("base64");
/** Creates per batch (one COMMIT) when preparing in process. */
const IN_PROCESS_BATCH = 1000;
/** Linux's clock ticks per second in /proc/<pid>/stat (USER_HZ). */
const CLOCK_TICKS = 100;

/** Creates secrets `prefix/from .. prefix/to` with `extra` fields, CREATE_CONCURRENCY at a time. */
async function createRange(url, token, prefix, from, to, extra = {}) {
  let next = from;
  const worker = async () => {
    while (next <= to) {
      const i = next++;
      const res = await fetch(`${url}/secrets`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ key: `${prefix}/${i}`, value: VALUE, ...extra }),
      });
      if (res.status !== 201) throw new Error(`create ${prefix}/${i}: ${res.status} ${await res.text()}`);
      await res.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: CREATE_CONCURRENCY }, worker));
}

/**
 * SQLite: creates secrets prefix/1 .. prefix/N (TTL ttlSeconds, or none) in a stopped server's data directory through the built
 * vault in this process (the same lifecycle, units of work and audit rows as over HTTP, as the
 * master key from 127.0.0.1; IN_PROCESS_BATCH units per batch), many times faster than HTTP.
 */
async function createInProcess(dir, prefix, n, ttlSeconds) {
  const { createLogger, createVault, openDatabase, SqliteEngine, ValueCipher } = await import("../dist/internal.js");
  const db = openDatabase(join(dir, "vault.db"));
  const root = Buffer.from(readFileSync(join(dir, "encryption.key"), "utf8").trim(), "hex");
  const cipher = new ValueCipher(root);
  const log = createLogger("error");
  const engine = new SqliteEngine(db, { auditChainKey: cipher.auditChainKeys().get(cipher.currentKeyId) ?? null, log });
  try {
    const vault = createVault(engine, {
      cipher,
      log,
      masterKey: randomBytes(24).toString("hex"),
      now: () => Date.now(),
      activeLimit: () => null,
      publicUrl: "http://127.0.0.1",
      maxValueBytes: 65536,
      trustProxy: false,
    });
    const origin = { actor: "master", principalId: null, ip: "127.0.0.1", recorded: false };
    for (let from = 1; from <= n; from += IN_PROCESS_BATCH) {
      const units = [];
      for (let i = from; i < Math.min(from + IN_PROCESS_BATCH, n + 1); i++) {
        units.push(vault.tx.run((w) => vault.secrets.create(w, { scope: "global", key: `${prefix}/${i}`, value: VALUE, ttlSeconds }, origin)));
      }
      await Promise.all(units);
    }
  } finally {
    await engine.close();
  }
}

/** A process's CPU time so far (user + system), microseconds, from /proc/<pid>/stat. */
function cpuUs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS;
}

/**
 * Runs wrk against the server with a Lua script; returns {rps, p50, p99, non2xx, cpu} (times in
 * milliseconds; cpu: the server's CPU time per request, microseconds, which the other load on the
 * machine disturbs far less than req/s).
 */
function wrk(server, token, lua, seconds = SECONDS) {
  const url = server.url;
  const cpu0 = cpuUs(server.child.pid);
  const dir = mkdtempSync(join(tmpdir(), "ev-scale-lua-"));
  const script = join(dir, "s.lua");
  writeFileSync(script, `wrk.headers["Authorization"] = "Bearer ${token}"\n${lua}\n`);
  try {
    const out = execFileSync("wrk", ["-t1", `-c${CONNECTIONS}`, `-d${seconds}s`, "--latency", "-s", script, url], { encoding: "utf8" });
    const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? Number.NaN);
    const pct = (p) => toMs(new RegExp(`^\\s+${p}%\\s+([\\d.]+\\w+)`, "m").exec(out)?.[1]);
    const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
    const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? Number.NaN);
    return { rps, p50: pct(50), p99: pct(99), non2xx, cpu: (cpuUs(server.child.pid) - cpu0) / requests };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function toMs(text) {
  if (text === undefined) return Number.NaN;
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(text);
  if (!m) return Number.NaN;
  const n = Number(m[1]);
  return m[2] === "us" ? n / 1000 : m[2] === "ms" ? n : m[2] === "s" ? n * 1000 : n * 60_000;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
/** The median of each figure of several wrk runs (non-2xx summed). */
const medianRun = (runs) => ({
  rps: median(runs.map((r) => r.rps)),
  p50: median(runs.map((r) => r.p50)),
  p99: median(runs.map((r) => r.p99)),
  cpu: median(runs.map((r) => r.cpu)),
  non2xx: runs.reduce((n, r) => n + r.non2xx, 0),
  all: runs.map((r) => Math.round(r.rps)),
});

const randomKeyLua = (n, prefix = "s") =>
  `math.randomseed(os.time())\nrequest = function() return wrk.format("GET", "/secrets/${prefix}/" .. math.random(1, ${n})) end`;
const fixedLua = (path) => `request = function() return wrk.format("GET", "${path}") end`;

function rssMb(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
}

function dirBytes(dir) {
  let total = 0;
  for (const name of readdirSync(dir)) total += statSync(join(dir, name)).size;
  return total;
}

/** The count of one `vault_secret_events_total` type in the server's /metrics. */
async function eventCount(url, token, type) {
  const text = await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } })).text();
  return Number(new RegExp(`^vault_secret_events_total\\{type="${type}"\\} (\\d+)`, "m").exec(text)?.[1] ?? 0);
}

const fmt = (n, d = 0) => (Number.isFinite(n) ? n.toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d }) : "-");

/** The build's schema version: the user_version its migrations give a new database (dist/). */
async function buildSchemaVersion() {
  const { openDatabase } = await import("../dist/internal.js");
  const db = openDatabase(":memory:");
  try {
    return Number(db.pragma("user_version", { simple: true }));
  } finally {
    db.close();
  }
}

/**
 * Refuses a kept data set made at an older schema version (SQLite's user_version) unless
 * SCALE_ALLOW_OLD_DATA=1: the server would migrate its copy at the start, and its reads would
 * measure the upgrade (a secret made before version 13 has no audit head, so its first read
 * writes its row at once), not the build.
 */
async function refuseOlderSchema(n, home) {
  const { default: Database } = await import("better-sqlite3");
  const db = new Database(join(home, "data", "vault.db"), { readonly: true, fileMustExist: true });
  const made = Number(db.pragma("user_version", { simple: true }));
  db.close();
  const build = await buildSchemaVersion();
  if (made >= build || process.env.SCALE_ALLOW_OLD_DATA === "1") return;
  throw new Error(
    `N=${n}: ${home} was made at schema version ${made}, this build's is ${build}: its reads would measure the upgrade. ` +
      "Make the data sets again (SCALE_PREPARE_ONLY=1 with a new SCALE_DATA_DIR), or set SCALE_ALLOW_OLD_DATA=1.",
  );
}

/**
 * N live secrets in a data directory: `{dir, env, home, temporary}`. With SCALE_DATA_DIR,
 * made once into `<dir>/n<N>/` (data/ and settings.json) and reused; else in a temporary directory.
 */
async function prepare(n) {
  const home = KEEP_DIR === undefined ? mkdtempSync(join(tmpdir(), "ev-scale-")) : join(KEEP_DIR, `n${n}`);
  const settingsFile = join(home, "settings.json");
  if (KEEP_DIR !== undefined && existsSync(settingsFile)) {
    const saved = JSON.parse(readFileSync(settingsFile, "utf8"));
    await refuseOlderSchema(n, home);
    process.stderr.write(`N=${n}: reusing ${home}\n`);
    return { dir: join(home, "data"), env: saved.env, home, temporary: false };
  }
  rmSync(home, { recursive: true, force: true });
  mkdirSync(home, { recursive: true });
  const { license, publicKey } = makeLicense(home);
  const env = {
    VAULT_MASTER_KEY: randomBytes(24).toString("base64url"),
    VAULT_LICENSE_KEY: license,
    VAULT_LICENSE_PUBLIC_KEY: publicKey,
    VAULT_LOG_LEVEL: "warn",
    ...(DATABASE_URL === undefined
      ? {}
      : { VAULT_DATABASE_URL: DATABASE_URL, VAULT_ENCRYPTION_KEY: randomBytes(32).toString("hex"), VAULT_WEBHOOK_SECRET: randomBytes(24).toString("base64url") }),
  };
  const dir = join(home, "data");
  const server = await startServer(dir, { ...env, ...SERVER_ENV });
  try {
    const t0 = performance.now();
    if (DATABASE_URL === undefined) await stopServer(server.child);
    await (DATABASE_URL === undefined ? createInProcess(dir, "s", n) : createRange(server.url, env.VAULT_MASTER_KEY, "s", 1, n));
    const createS = (performance.now() - t0) / 1000;
    process.stderr.write(`N=${n}: created in ${fmt(createS, 1)} s (${fmt(n / createS)} /s)\n`);
  } finally {
    await stopServer(server.child);
  }
  if (KEEP_DIR !== undefined) writeFileSync(settingsFile, JSON.stringify({ n, env }));
  return { dir, env, home, temporary: KEEP_DIR === undefined };
}

async function measure(n) {
  const prepared = await prepare(n);
  // A kept data set is measured on a copy, so that it stays as it was made.
  const work = prepared.temporary ? undefined : mkdtempSync(join(tmpdir(), "ev-scale-run-"));
  const dataDir = work === undefined ? prepared.dir : join(work, "data");
  if (work !== undefined) cpSync(prepared.dir, dataDir, { recursive: true });
  // The copy's pages written out now: else the server's first fsyncs pay for the whole copy.
  execFileSync("sync");
  const env = { ...prepared.env, ...SERVER_ENV };
  const token = env.VAULT_MASTER_KEY;
  let server = await startServer(dataDir, env);
  try {
    // A warm-up run, not counted: the first seconds after a start measure the JIT and cold caches.
    wrk(server, token, randomKeyLua(n), WARMUP_SECONDS);
    const randoms = [];
    const hots = [];
    for (let i = 0; i < REPEAT; i++) {
      randoms.push(wrk(server, token, randomKeyLua(n)));
      hots.push(wrk(server, token, fixedLua("/secrets/s/1")));
    }
    process.stderr.write(`N=${n}: GETs done\n`);
    const random = medianRun(randoms);
    const hot = medianRun(hots);
    process.stderr.write(`N=${n}: random req/s ${random.all.join(", ")}; hot req/s ${hot.all.join(", ")}\n`);
    const list = wrk(server, token, fixedLua("/secrets?limit=100"), 3);
    const audit = wrk(server, token, fixedLua("/audit?key=s%2F1&limit=100"), 3);
    const rss = rssMb(server.child.pid);
    await stopServer(server.child);
    const bytes = DATABASE_URL === undefined ? dirBytes(dataDir) / n : Number.NaN;
    server = await startServer(dataDir, env);
    const restartMs = server.startMs;
    let expiring = { p99: Number.NaN };
    let expired = Number.NaN;
    if (EXPIRING > 0) {
      // EXPIRING secrets with a 1 s TTL made while no sweeper runs, then a start with it on: they
      // are all due at once, and random reads run while the sweeper destroys them.
      await stopServer(server.child);
      if (DATABASE_URL === undefined) {
        await createInProcess(dataDir, "e", EXPIRING, 1);
        execFileSync("sync");
      }
      else {
        server = await startServer(dataDir, { ...env, VAULT_SWEEP_INTERVAL_MS: "0" });
        await createRange(server.url, token, "e", 1, EXPIRING, { ttl_seconds: 1 });
        await stopServer(server.child);
      }
      await new Promise((resolve) => setTimeout(resolve, 1000));
      // The sweeper's first tick after the warm-up (as for the steady runs): the p99 measured is the
      // expiry's, not the first seconds after a start.
      const sweepAfterMs = (WARMUP_SECONDS + 1) * 1000;
      server = await startServer(dataDir, { ...env, VAULT_SWEEP_INTERVAL_MS: String(sweepAfterMs) });
      const before = await eventCount(server.url, token, "secret.expired");
      wrk(server, token, randomKeyLua(n), WARMUP_SECONDS);
      expiring = wrk(server, token, randomKeyLua(n), Math.max(SECONDS, 10));
      expired = (await eventCount(server.url, token, "secret.expired")) - before;
    }
    return { n, random, hot, list, audit, rss, bytes, restartMs, expiring, expired };
  } finally {
    await stopServer(server.child);
    if (work !== undefined) rmSync(work, { recursive: true, force: true });
    if (prepared.temporary) rmSync(prepared.home, { recursive: true, force: true });
  }
}

if (process.env.SCALE_PREPARE_ONLY === "1") {
  for (const n of SIZES) await prepare(n);
  process.exit(0);
}
const rows = [];
for (const n of SIZES) rows.push(await measure(n));
const engine = DATABASE_URL === undefined ? "SQLite" : "PostgreSQL";
console.log(`\n${engine}, wrk -t1 -c${CONNECTIONS}, ${SECONDS} s per run, GETs the median of ${REPEAT} alternating runs; times in ms\n`);
console.log(
  "| live secrets | GET random req/s | p50 | p99 | CPU us/GET | GET hot req/s | p99 | CPU us/GET | random/hot req/s | hot/random CPU | list page req/s | audit by key req/s | RSS MB | bytes/secret | restart ms | p99 during expiry | expired meanwhile |",
);
console.log("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
for (const r of rows) {
  console.log(
    `| ${fmt(r.n)} | ${fmt(r.random.rps)} | ${fmt(r.random.p50, 1)} | ${fmt(r.random.p99, 1)} | ${fmt(r.random.cpu)} | ${fmt(r.hot.rps)} | ${fmt(r.hot.p99, 1)} | ${fmt(r.hot.cpu)} | ${fmt(r.random.rps / r.hot.rps, 2)} | ${fmt(r.hot.cpu / r.random.cpu, 2)} | ${fmt(r.list.rps)} | ${fmt(r.audit.rps)} | ${fmt(r.rss)} | ${fmt(r.bytes)} | ${fmt(r.restartMs)} | ${fmt(r.expiring.p99, 1)} | ${fmt(r.expired)} |`,
  );
}
const failed = rows.flatMap((r) => [r.random, r.hot, r.list, r.audit, r.expiring]).reduce((n, x) => n + (x.non2xx ?? 0), 0);
if (failed > 0) console.log(`\n${failed} responses were not 2xx: the figures above count them`);
