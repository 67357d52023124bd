#!/usr/bin/env node
// Load benchmark of the built server (docs/performance.md).
//
//   npm run build && npm run bench
//
// Starts `node bin/ephemeral-vault.js` as a child process on a temporary data
// directory (synchronous=FULL, the default; VAULT_LOG_LEVEL=warn) with a
// license made by the command's own `license keygen` / `license issue`, so
// creates are not capped at 100. Then runs each scenario with autocannon and
// prints requests/s, p50 and p99 latency and the non-2xx count.
//
// Settings (environment):
//   BENCH_SECONDS      seconds per scenario (default 10)
//   BENCH_CONNECTIONS  concurrent connections (default 50)
//   BENCH_WARMUP       warm-up seconds per scenario, not counted (default 1; 0 skips it)
//   BENCH_SCENARIOS    comma-separated scenario ids to run (default: all), e.g. "get,post"
//   BENCH_JSON         write the raw results as JSON to this file
//   BENCH_DATABASE_URL run on PostgreSQL (an empty database; bench/pg.sh starts a throwaway cluster)
//   BENCH_NODES        vault processes on that database (default 1); the connections are split
//                      between them and their req/s summed, p99 the worst of them
//   BENCH_PG_GROUP_COMMIT  VAULT_DATABASE_GROUP_COMMIT of those processes (default false)
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { makeLicense, ROOT, startServer, stopServer } from "./server.mjs";

const SECONDS = positive("BENCH_SECONDS", 10);
const CONNECTIONS = positive("BENCH_CONNECTIONS", 50);
const WARMUP = positive("BENCH_WARMUP", 1, true);
const ONLY = process.env.BENCH_SCENARIOS?.split(",").map((s) => s.trim()).filter(Boolean);
const DATABASE_URL = process.env.BENCH_DATABASE_URL || undefined;
const NODES = DATABASE_URL === undefined ? 1 : positive("BENCH_NODES", 1);

/** A 64-byte value: small, like a password or an API token. */
const VALUE = randomBytes(48).toString("base64");

/**
 * The scenarios. Each has an `id` (for BENCH_SCENARIOS), a `name` (the path
 * as shown in the table), and `setup(ctx)`, which prepares the data and
 * returns autocannon options (method, path, headers, body or requests).
 * `ctx` is { url, masterKey, api(method, path, body?, token?) -> parsed JSON }.
 * A returned `path` is appended to the server's url; `requests` entries carry their own.
 */
const SCENARIOS = [
  {
    id: "get",
    name: "GET /secrets/:key",
    description: "retrieve a keyed secret without a read limit (decrypt + read_count update + commit per request)",
    async setup(ctx) {
      await ctx.api("POST", "/secrets", { key: "bench/read", value: VALUE });
      return { method: "GET", path: "/secrets/bench/read" };
    },
  },
  {
    id: "post",
    name: "POST /secrets",
    description: "create a keyed secret, a new key per request (encrypt + insert + commit per request)",
    async setup() {
      let n = 0;
      const prefix = `bench/new/${Date.now()}`;
      return {
        headers: { "content-type": "application/json" },
        requests: [
          {
            method: "POST",
            path: "/secrets",
            setupRequest: (request) => ({ ...request, body: JSON.stringify({ key: `${prefix}/${n++}`, value: VALUE }) }),
          },
        ],
      };
    },
  },
  {
    id: "burn",
    name: "POST + GET /secrets/:key (max_reads 1)",
    description:
      "burn after reading: create a secret with max_reads 1, then read it (the read that burns it); each pair is a new record, so its HKDF record key is never cached",
    async setup() {
      const prefix = `bench/burn/${Date.now()}`;
      let n = 0;
      return {
        headers: { "content-type": "application/json" },
        requests: [
          {
            method: "POST",
            path: "/secrets",
            setupRequest: (request, context) => {
              const key = `${prefix}/${n++}`;
              context.key = key;
              return { ...request, body: JSON.stringify({ key, value: VALUE, max_reads: 1 }) };
            },
          },
          {
            method: "GET",
            setupRequest: (request, context) => ({ ...request, path: `/secrets/${context.key}` }),
          },
        ],
      };
    },
  },
  {
    id: "get-scoped",
    name: "GET /secrets/:key (scoped key)",
    description:
      "retrieve with a prefix-scoped read key: token hash lookup + prefix check + audit row, in the same commit",
    async setup(ctx) {
      await ctx.api("POST", "/secrets", { key: "bench/scoped/read", value: VALUE });
      const { token } = await ctx.api("POST", "/keys", {
        name: "bench reader",
        permissions: ["read"],
        prefix: "bench/scoped/",
      });
      return { method: "GET", path: "/secrets/bench/scoped/read", headers: { authorization: `Bearer ${token}` } };
    },
  },
];

function positive(name, fallback, zeroOk = false) {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0 || (n === 0 && !zeroOk)) {
    console.error(`bench: ${name} must be a ${zeroOk ? "non-negative" : "positive"} number`);
    process.exit(2);
  }
  return n;
}

/**
 * The same load split over several nodes (connections divided between them):
 * req/s and totals summed, latencies the worst node's.
 */
async function runOnNodes(base, nodes, path) {
  const per = Math.max(1, Math.floor(CONNECTIONS / nodes.length));
  const results = await Promise.all(
    nodes.map((n) =>
      run({
        ...base,
        url: n.url + path,
        requests: base.requests?.map((r) => ({ ...r })),
        connections: per,
        duration: SECONDS,
      }),
    ),
  );
  const sum = (f) => results.reduce((t, r) => t + f(r), 0);
  return {
    requests: { average: sum((r) => r.requests.average), total: sum((r) => r.requests.total) },
    latency: { p50: Math.max(...results.map((r) => r.latency.p50)), p99: Math.max(...results.map((r) => r.latency.p99)) },
    non2xx: sum((r) => r.non2xx),
    errors: sum((r) => r.errors),
    timeouts: sum((r) => r.timeouts),
    statusCodeStats: results[0].statusCodeStats,
  };
}

function run(options) {
  return new Promise((resolve, reject) => {
    autocannon(options, (err, result) => (err ? reject(err) : resolve(result)));
  });
}

const fmt = (n, digits = 0) => n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });

async function main() {
  if (!existsSync(join(ROOT, "dist", "cli.js"))) {
    console.error("bench: dist/ is missing; run `npm run build` first");
    process.exit(2);
  }
  const scenarios = SCENARIOS.filter((s) => !ONLY || ONLY.includes(s.id));
  if (scenarios.length === 0) {
    console.error(`bench: no scenario matches BENCH_SCENARIOS; known: ${SCENARIOS.map((s) => s.id).join(", ")}`);
    process.exit(2);
  }

  const dir = mkdtempSync(join(tmpdir(), "ev-bench-"));
  const masterKey = randomBytes(24).toString("base64url");
  let server;
  const others = [];
  const cleanup = async () => {
    if (server) await stopServer(server.child);
    for (const o of others) await stopServer(o.child);
    rmSync(dir, { recursive: true, force: true });
  };
  process.once("SIGINT", () => cleanup().then(() => process.exit(130)));

  try {
    const { license, publicKey } = makeLicense(dir);
    const env = {
      VAULT_MASTER_KEY: masterKey,
      VAULT_LICENSE_KEY: license,
      VAULT_LICENSE_PUBLIC_KEY: publicKey,
      VAULT_LOG_LEVEL: "warn",
      ...(DATABASE_URL === undefined
        ? {}
        : {
            VAULT_DATABASE_URL: DATABASE_URL,
            VAULT_ENCRYPTION_KEY: randomBytes(32).toString("hex"),
            VAULT_WEBHOOK_SECRET: randomBytes(24).toString("base64url"),
            VAULT_DATABASE_POOL_SIZE: process.env.BENCH_POOL_SIZE ?? "20",
            VAULT_DATABASE_GROUP_COMMIT: process.env.BENCH_PG_GROUP_COMMIT ?? "false",
          }),
    };
    server = await startServer(join(dir, "data"), env);
    for (let i = 1; i < NODES; i++) others.push(await startServer(join(dir, `data${i}`), { ...env, VAULT_ENCRYPTION_KEY: env.VAULT_ENCRYPTION_KEY }));
    const auth = { authorization: `Bearer ${masterKey}` };
    const ctx = {
      url: server.url,
      masterKey,
      async api(method, path, body, token = masterKey) {
        const res = await fetch(server.url + path, {
          method,
          headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
          body: body ? JSON.stringify(body) : undefined,
        });
        const json = await res.json();
        if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
        return json;
      },
    };

    const cpu = cpus();
    console.log(`ephemeral-vault benchmark: ${server.url}`);
    console.log(
      `node ${process.version}, ${cpu.length} CPU (${cpu[0]?.model ?? "unknown"}), ${fmt(totalmem() / 2 ** 30, 1)} GiB RAM; ` +
        `${CONNECTIONS} connections, ${SECONDS} s per scenario (+${WARMUP} s warm-up); ` +
        (DATABASE_URL === undefined ? "SQLite, synchronous=FULL" : `PostgreSQL (synchronous_commit=on), ${NODES} node(s)`) +
        "; licensed (no secret limit)",
    );
    console.log("the client (autocannon) runs on the same machine as the server\n");

    const results = [];
    for (const scenario of scenarios) {
      const { path = "", ...options } = await scenario.setup(ctx);
      const base = {
        ...options,
        // autocannon takes the path as part of the url (a top-level `path` is ignored)
        url: server.url + path,
        connections: CONNECTIONS,
        headers: { ...auth, ...options.headers },
      };
      if (WARMUP > 0) await run({ ...base, duration: WARMUP });
      process.stdout.write(`${scenario.name} ... `);
      const r = NODES === 1 ? await run({ ...base, duration: SECONDS, title: scenario.name }) : await runOnNodes(base, [server, ...others], path);
      const row = {
        id: scenario.id,
        scenario: scenario.name,
        description: scenario.description,
        requestsPerSecond: r.requests.average,
        p50Ms: r.latency.p50,
        p99Ms: r.latency.p99,
        total: r.requests.total,
        non2xx: r.non2xx,
        errors: r.errors,
        timeouts: r.timeouts,
        statusCodes: Object.fromEntries(Object.entries(r.statusCodeStats ?? {}).map(([code, s]) => [code, s.count])),
      };
      results.push(row);
      console.log(`${fmt(row.requestsPerSecond)} req/s`);
    }

    console.log("\n| scenario | req/s | p50 ms | p99 ms | requests | non-2xx | errors |");
    console.log("|---|---:|---:|---:|---:|---:|---:|");
    for (const r of results) {
      console.log(
        `| ${r.scenario} | ${fmt(r.requestsPerSecond)} | ${fmt(r.p50Ms, 1)} | ${fmt(r.p99Ms, 1)} | ${fmt(r.total)} | ${fmt(r.non2xx)} | ${fmt(r.errors + r.timeouts)} |`,
      );
    }
    const bad = results.filter((r) => r.non2xx > 0 || r.errors > 0);
    for (const r of bad) console.log(`\n${r.scenario}: status codes ${JSON.stringify(r.statusCodes)}, ${r.errors} errors, ${r.timeouts} timeouts`);
    if (process.env.BENCH_JSON) {
      writeFileSync(
        process.env.BENCH_JSON,
        JSON.stringify({ node: process.version, cpus: cpu.length, connections: CONNECTIONS, seconds: SECONDS, results }, null, 2) + "\n",
      );
    }
    const serverOutput = server.output().trim();
    if (/"level":(50|60)/.test(serverOutput)) console.log(`\nthe server logged errors:\n${serverOutput}`);
    process.exitCode = bad.length > 0 ? 1 : 0;
  } finally {
    await cleanup();
  }
}

main().catch((err) => {
  console.error(`bench: ${err && err.stack ? err.stack : err}`);
  process.exitCode = 1;
});
