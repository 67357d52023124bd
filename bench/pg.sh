#!/usr/bin/env bash
# The load benchmark (bench/run.mjs) on PostgreSQL, measured as docs/performance.md "PostgreSQL" does:
# a throwaway cluster from Debian's `postgresql` package (initdb in a temp dir, 127.0.0.1 only, fsync
# and synchronous_commit on, as in production); statistics from the seed on (an ANALYZE every 2 s
# while a run lasts: run.mjs seeds its rows after the vault starts); the group commit on and off
# (VAULT_DATABASE_GROUP_COMMIT) alternated within each round, the order swapped every round, on one
# node and on two nodes; and at the end, per scenario, the median of the rounds' req/s, p99 and the
# median on/off ratio. The host is noisy: read the ratios, not the absolute figures.
# Usage, from the project root after `npm run build`: bash bench/pg.sh
# Env: BENCH_SECONDS, BENCH_CONNECTIONS, BENCH_SCENARIOS as for run.mjs (default scenarios get,post);
# BENCH_ROUNDS (default 3); BENCH_PG_NODES (default "1 2"); PG_BIN (default: the newest
# /usr/lib/postgresql/*/bin).
set -eu
PG_BIN=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
[ -x "$PG_BIN/initdb" ] || { echo "no PostgreSQL binaries (apt-get install postgresql)"; exit 2; }
ROUNDS=${BENCH_ROUNDS:-3}; export BENCH_SCENARIOS=${BENCH_SCENARIOS:-get,post} BENCH_SECONDS=${BENCH_SECONDS:-5}
T=$(mktemp -d); PORT=$((20000 + RANDOM % 20000))
AS=(); if [ "$(id -u)" = 0 ]; then chown postgres "$T"; AS=(runuser -u postgres --); fi
trap '"${AS[@]}" "$PG_BIN/pg_ctl" -D "$T/data" -m fast stop >/dev/null 2>&1 || true; rm -rf "$T"' EXIT
"${AS[@]}" "$PG_BIN/initdb" -D "$T/data" -U bench --auth=trust --encoding=UTF8 --locale=C >/dev/null
"${AS[@]}" "$PG_BIN/pg_ctl" -D "$T/data" -l "$T/log" -w -o "-p $PORT -k $T -c listen_addresses=127.0.0.1 -c max_connections=200" start >/dev/null
psql() { "$PG_BIN/psql" -h 127.0.0.1 -p "$PORT" -U bench -qAt "$@"; }
echo "PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') ($(nproc) CPUs), $ROUNDS rounds, scenarios $BENCH_SCENARIOS, ${BENCH_SECONDS}s each"

# One run: a fresh database, the vault's nodes on it, run.mjs; its JSON in $T/<nodes>-<mode>-<round>.json.
run() { # nodes mode(on|off) round
  local db="b_$1_$2_$3"
  psql -d postgres -c "CREATE DATABASE $db" >/dev/null
  (while sleep 2; do psql -d "$db" -c ANALYZE >/dev/null 2>&1 || true; done) & local analyzer=$!
  BENCH_PG_GROUP_COMMIT=$([ "$2" = on ] && echo true || echo false) BENCH_JSON="$T/$1-$2-$3.json" \
    BENCH_DATABASE_URL="postgres://bench@127.0.0.1:$PORT/$db" BENCH_NODES=$1 node bench/run.mjs >"$T/$1-$2-$3.log" 2>&1 \
    || { echo "run $1 node(s), group commit $2, round $3 failed:"; tail -5 "$T/$1-$2-$3.log"; }
  kill "$analyzer" 2>/dev/null; wait "$analyzer" 2>/dev/null || true
  echo "round $3, $1 node(s), group commit $2: $(node -e 'for (const r of JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).results) process.stdout.write(`${r.scenario} ${Math.round(r.requestsPerSecond)} req/s p99 ${r.p99Ms} ms; `)' "$T/$1-$2-$3.json" 2>/dev/null)"
  psql -d postgres -c "DROP DATABASE $db WITH (FORCE)" >/dev/null
}
for r in $(seq "$ROUNDS"); do
  for n in ${BENCH_PG_NODES:-1 2}; do
    if [ $((r % 2)) = 1 ]; then order="on off"; else order="off on"; fi
    for mode in $order; do run "$n" "$mode" "$r"; done
  done
done

# The medians and the on/off ratios, per node count and scenario.
node - "$T" "$ROUNDS" ${BENCH_PG_NODES:-1 2} <<'JS'
const fs = require("node:fs");
const [dir, rounds, ...nodes] = process.argv.slice(2);
const median = (xs) => { const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b); return s.length ? s[(s.length - 1) >> 1] : NaN; };
const load = (n, mode, r) => { try { return JSON.parse(fs.readFileSync(`${dir}/${n}-${mode}-${r}.json`, "utf8")).results ?? []; } catch { return []; } };
console.log("\n| nodes | scenario | group commit on: req/s, p99 ms | off: req/s, p99 ms | on/off req/s (median of rounds) |");
console.log("|---:|---|---:|---:|---:|");
for (const n of nodes) {
  const runs = { on: [], off: [] };
  for (let r = 1; r <= Number(rounds); r++) for (const mode of ["on", "off"]) runs[mode].push(load(n, mode, r));
  const names = [...new Set(runs.on.flat().map((x) => x.scenario))];
  for (const name of names) {
    const pick = (mode, field) => runs[mode].map((rows) => rows.find((x) => x.scenario === name)?.[field]);
    const ratios = runs.on.map((rows, i) => (rows.find((x) => x.scenario === name)?.requestsPerSecond ?? NaN) / (runs.off[i].find((x) => x.scenario === name)?.requestsPerSecond ?? NaN));
    const cell = (mode) => `${Math.round(median(pick(mode, "requestsPerSecond")))}, ${median(pick(mode, "p99Ms")).toFixed(1)}`;
    console.log(`| ${n} | ${name} | ${cell("on")} | ${cell("off")} | ${median(ratios).toFixed(2)} |`);
  }
}
JS
