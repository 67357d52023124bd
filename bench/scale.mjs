#!/usr/bin/env node
// Reads at scale (docs/performance.md, "Reads at scale"): how the built server holds up from a
// thousand live secrets to a million, on SQLite (the default) or PostgreSQL (SCALE_DATABASE_URL).
//
//   npm run build && node bench/scale.mjs
//
// For each size N (SCALE_SIZES, default 1000,100000,1000000) on a fresh data directory, with a
// license so creates are not capped:
//   1. creates N live secrets (keys s/1 .. s/N, 64-byte values, no TTL) over HTTP;
//   2. GETs of random keys and of one hot key (wrk -t1 -c50, a Lua script picks the key),
//      the first page of the list (limit 100), an audit query by key (limit 100);
//   3. the server's RSS (VmRSS), the data directory's bytes per secret, the restart time
//      (SIGTERM, then spawn to listening);
//   4. the p99 of random-key GETs while 100,000 more secrets (SCALE_EXPIRING) come due at once:
//      created with a TTL that ends after the steady runs, then read while the sweeper
//      destroys them.
// Prints one markdown table. Needs `wrk` (Debian's package). Loops are bounded; only 127.0.0.1.
//
// Settings: SCALE_SIZES, SCALE_SECONDS (5), SCALE_CONNECTIONS (50), SCALE_EXPIRING (100000),
// SCALE_CREATE_CONCURRENCY (64), SCALE_DATABASE_URL (an empty PostgreSQL database).
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makeLicense, startServer, stopServer } from "./server.mjs";

const SIZES = (process.env.SCALE_SIZES ?? "1000,100000,1000000").split(",").map((s) => Number(s.trim()));
const SECONDS = Number(process.env.SCALE_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.SCALE_CONNECTIONS ?? 50);
const EXPIRING = Number(process.env.SCALE_EXPIRING ?? 100_000);
const CREATE_CONCURRENCY = Number(process.env.SCALE_CREATE_CONCURRENCY ?? 64);
const DATABASE_URL = process.env.SCALE_DATABASE_URL || undefined;
const VALUE = randomBytes(48).toString("base64");

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

/** Runs wrk against `url` with a Lua script; returns {rps, p50, p99} (milliseconds). */
function wrk(url, token, lua, seconds = SECONDS) {
  const dir = mkdtempSync(join(tmpdir(), "ev-scale-lua-"));
  const script = join(dir, "s.lua");
  writeFileSync(script, `wrk.headers["Authorization"] = "Bearer ${token}"\n${lua}\n`);
  try {
    const out = execFileSync("wrk", ["-t1", `-c${CONNECTIONS}`, `-d${seconds}s`, "--latency", "-s", script, url], { encoding: "utf8" });
    const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? Number.NaN);
    const pct = (p) => toMs(new RegExp(`^\\s+${p}%\\s+([\\d.]+\\w+)`, "m").exec(out)?.[1]);
    const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
    return { rps, p50: pct(50), p99: pct(99), non2xx };
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

const fmt = (n, d = 0) => (Number.isFinite(n) ? n.toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d }) : "-");

async function measure(n) {
  const dir = mkdtempSync(join(tmpdir(), "ev-scale-"));
  const token = randomBytes(24).toString("base64url");
  const { license, publicKey } = makeLicense(dir);
  const env = {
    VAULT_MASTER_KEY: token,
    VAULT_LICENSE_KEY: license,
    VAULT_LICENSE_PUBLIC_KEY: publicKey,
    VAULT_LOG_LEVEL: "warn",
    ...(DATABASE_URL === undefined
      ? {}
      : { VAULT_DATABASE_URL: DATABASE_URL, VAULT_ENCRYPTION_KEY: randomBytes(32).toString("hex"), VAULT_WEBHOOK_SECRET: randomBytes(24).toString("base64url") }),
  };
  const dataDir = join(dir, "data");
  let server = await startServer(dataDir, env);
  try {
    const t0 = performance.now();
    await createRange(server.url, token, "s", 1, n);
    const createS = (performance.now() - t0) / 1000;
    process.stderr.write(`N=${n}: created in ${fmt(createS, 1)} s (${fmt(n / createS)} /s)\n`);
    const random = wrk(server.url, token, randomKeyLua(n));
    const hot = wrk(server.url, token, fixedLua("/secrets/s/1"));
    const list = wrk(server.url, token, fixedLua("/secrets?limit=100"), 3);
    const audit = wrk(server.url, token, fixedLua("/audit?key=s%2F1&limit=100"), 3);
    const rss = rssMb(server.child.pid);
    await stopServer(server.child);
    const bytes = DATABASE_URL === undefined ? dirBytes(dataDir) / n : Number.NaN;
    server = await startServer(dataDir, env);
    const restartMs = server.startMs;
    // Mass expiry: EXPIRING secrets whose TTL ends once they are all made, then random reads meanwhile.
    const ttl = Math.ceil(EXPIRING / 2000) + 10;
    const e0 = performance.now();
    await createRange(server.url, token, "e", 1, EXPIRING, { ttl_seconds: ttl });
    const waitMs = Math.max(0, ttl * 1000 - (performance.now() - e0) - 1000);
    await new Promise((resolve) => setTimeout(resolve, waitMs));
    const expiring = wrk(server.url, token, randomKeyLua(n), Math.max(SECONDS, 10));
    return { n, random, hot, list, audit, rss, bytes, restartMs, expiring };
  } finally {
    await stopServer(server.child);
    rmSync(dir, { recursive: true, force: true });
  }
}

const rows = [];
for (const n of SIZES) rows.push(await measure(n));
console.log(`\n${DATABASE_URL === undefined ? "SQLite" : "PostgreSQL"}, wrk -t1 -c${CONNECTIONS}, ${SECONDS} s per run; times in ms\n`);
console.log("| live secrets | GET random req/s | p50 | p99 | GET hot req/s | p99 | random/hot | list page req/s | audit by key req/s | RSS MB | bytes/secret | restart ms | p99 during expiry |");
console.log("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
for (const r of rows) {
  console.log(
    `| ${fmt(r.n)} | ${fmt(r.random.rps)} | ${fmt(r.random.p50, 1)} | ${fmt(r.random.p99, 1)} | ${fmt(r.hot.rps)} | ${fmt(r.hot.p99, 1)} | ${fmt(r.random.rps / r.hot.rps, 2)} | ${fmt(r.list.rps)} | ${fmt(r.audit.rps)} | ${fmt(r.rss)} | ${fmt(r.bytes)} | ${fmt(r.restartMs)} | ${fmt(r.expiring.p99, 1)} |`,
  );
}
