#!/usr/bin/env node
// The console's audit check on PostgreSQL (docs/console.md, "Audit"): how long a view of /ui/audit
// takes to check the chains at a large log, and whether /health stays responsive meanwhile.
//
//   npm run build && node bench/pg-audit-check.mjs
//
// 1. Starts a throwaway cluster from Debian's `postgresql` package (initdb in a temporary
//    directory, 127.0.0.1 only, fsync on), or uses PG_AUDIT_DATABASE_URL (an empty database).
// 2. Opens a vault node in this process over it (dist/internal.js openPgEngine, pool of 8) and
//    writes PG_AUDIT_ROWS audit rows (default 300000) through the vault's own audit log
//    (AuditLog.record in units of work: 8 concurrent units of 1000 rows each per round, so the
//    rows spread over the pool's writer chains exactly as the store appends them).
// 3. Times the console's check (engine.verifyAudit, what /ui/audit calls): the first view, a
//    second view with no new row, and a third after 1000 new rows. During the first view it
//    samples the event-loop delay (perf_hooks monitorEventLoopDelay, 10 ms resolution) and sends
//    GET /health to the in-process app every 20 ms, reporting the slowest answer.
// 4. Times the offline full walk (`ephemeral-vault audit verify --database-url`, in process).
// Prints one markdown table. Loops are bounded; the only server is the cluster on 127.0.0.1.
//
// Settings: PG_AUDIT_ROWS (300000), PG_AUDIT_DATABASE_URL, PG_BIN (default: the newest
// /usr/lib/postgresql/*/bin).
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import { createLogger, createVault, main, openPgEngine, ValueCipher } from "../dist/internal.js";

const ROWS = Number(process.env.PG_AUDIT_ROWS ?? 300_000);
const PER_UNIT = 1000;
const UNITS = 8;

/** A throwaway cluster on 127.0.0.1 (as bench/pg.sh starts one); returns its URL and its stop. */
function startCluster() {
  const bin =
    process.env.PG_BIN ??
    `/usr/lib/postgresql/${readdirSync("/usr/lib/postgresql").sort((a, b) => Number(a) - Number(b)).at(-1)}/bin`;
  const dir = mkdtempSync(join(tmpdir(), "pg-audit-check-"));
  chmodSync(dir, 0o777);
  const as = process.getuid?.() === 0 ? ["runuser", "-u", "postgres", "--"] : [];
  const run = (cmd, args) => {
    const argv = [...as, join(bin, cmd), ...args];
    execFileSync(argv[0], argv.slice(1), { stdio: ["ignore", "ignore", "inherit"] });
  };
  const port = 20000 + Math.floor(Math.random() * 20000);
  run("initdb", ["-D", join(dir, "data"), "-U", "bench", "--auth=trust", "--encoding=UTF8", "--locale=C"]);
  run("pg_ctl", ["-D", join(dir, "data"), "-l", join(dir, "log"), "-w", "-o", `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`, "start"]);
  return {
    url: `postgres://bench@127.0.0.1:${port}/postgres`,
    stop: () => {
      try {
        run("pg_ctl", ["-D", join(dir, "data"), "-m", "fast", "stop"]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

const cluster = process.env.PG_AUDIT_DATABASE_URL ? undefined : startCluster();
const url = process.env.PG_AUDIT_DATABASE_URL ?? cluster.url;
const root = randomBytes(32);
const cipher = new ValueCipher(root);
const keys = cipher.auditChainKeys();
const engine = await openPgEngine({ url, poolSize: UNITS, auditChainKey: keys.get(cipher.currentKeyId) ?? null });
const masterKey = randomBytes(24).toString("hex");
const vault = createVault(engine, {
  cipher,
  log: createLogger("error"),
  masterKey,
  now: () => Date.now(),
  activeLimit: () => null,
  publicUrl: "http://127.0.0.1",
  maxValueBytes: 65536,
  trustProxy: false,
});

const entry = { scope: "global", action: "bench.row", key: "k", actor: "master", principalId: null, ip: "127.0.0.1" };
/** Writes `n` rows: rounds of UNITS concurrent units of PER_UNIT rows each (the last round smaller). */
async function write(n) {
  for (let done = 0; done < n; ) {
    const units = [];
    for (let u = 0; u < UNITS && done < n; u++) {
      const size = Math.min(PER_UNIT, n - done);
      done += size;
      units.push(
        vault.tx.run(async (w) => {
          for (let i = 0; i < size; i++) await vault.audit.record(w, entry);
        }),
      );
    }
    await Promise.all(units);
  }
}

/** One console check: its answer and its wall time, milliseconds. */
async function check() {
  const t = performance.now();
  const report = await engine.verifyAudit(keys);
  return { report, ms: performance.now() - t };
}

const rowsOut = [];
const row = (what, { report, ms }, extra = "") =>
  rowsOut.push(`| ${what} | ${ms.toFixed(0)} | ${report.ok ? "ok" : `BROKEN ${report.at}: ${report.reason}`} | ${report.rows} | ${report.walked ?? "(not reported)"} | ${extra} |`);

try {
  const t0 = performance.now();
  await write(ROWS);
  const chains = (await engine.pool.query("SELECT count(*)::int AS n FROM audit_chains")).rows[0].n;
  console.log(`wrote ${ROWS} audit rows in ${((performance.now() - t0) / 1000).toFixed(1)} s, ${chains} chains`);
  await engine.pool.query("VACUUM ANALYZE audit");

  // First view, with the event loop's delay and /health probed meanwhile.
  const delay = monitorEventLoopDelay({ resolution: 10 });
  let slowest = 0;
  let probes = 0;
  let probing = true;
  const prober = (async () => {
    while (probing) {
      const t = performance.now();
      const res = await vault.app.request("/health");
      if (res.status !== 200) throw new Error(`/health answered ${res.status}`);
      slowest = Math.max(slowest, performance.now() - t);
      probes += 1;
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  delay.enable();
  const first = await check();
  delay.disable();
  probing = false;
  await prober;
  row(
    "first view",
    first,
    `event loop delay max ${(delay.max / 1e6).toFixed(0)} ms, p99 ${(delay.percentile(99) / 1e6).toFixed(0)} ms; ${probes} /health probes, slowest ${slowest.toFixed(0)} ms`,
  );
  row("second view, 0 new rows", await check());
  await write(1000);
  row("third view, after 1000 new rows", await check());

  // The offline tool: always the full walk.
  process.env.VAULT_ENCRYPTION_KEY = root.toString("hex");
  console.log("audit verify (offline, full walk) says:");
  const t1 = performance.now();
  const code = await main(["audit", "verify", "--database-url", url]);
  const offline = performance.now() - t1;

  console.log(`\n| check | ms | answer | rows | rows walked | during the check |\n|---|---|---|---|---|---|`);
  for (const line of rowsOut) console.log(line);
  console.log(`\naudit verify (offline, full walk): ${offline.toFixed(0)} ms, exit ${code}`);
} finally {
  await engine.close();
  cluster?.stop();
}
