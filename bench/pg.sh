#!/usr/bin/env bash
# The load benchmark (bench/run.mjs) on PostgreSQL: starts a throwaway cluster from Debian's
# `postgresql` package (initdb in a temp dir, 127.0.0.1 only, fsync and synchronous_commit on,
# as in production), then runs the scenarios with one node and with two nodes on one database.
# Usage, from the project root after `npm run build`: bash bench/pg.sh
# Env: BENCH_SECONDS, BENCH_CONNECTIONS, BENCH_SCENARIOS as for run.mjs; PG_BIN (default: the
# newest /usr/lib/postgresql/*/bin); BENCH_PG_NODES (default "1 2").
set -eu
PG_BIN=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
[ -x "$PG_BIN/initdb" ] || { echo "no PostgreSQL binaries (apt-get install postgresql)"; exit 2; }
T=$(mktemp -d); PORT=$((20000 + RANDOM % 20000))
AS=(); if [ "$(id -u)" = 0 ]; then chown postgres "$T"; AS=(runuser -u postgres --); fi
trap '"${AS[@]}" "$PG_BIN/pg_ctl" -D "$T/data" -m fast stop >/dev/null 2>&1 || true; rm -rf "$T"' EXIT
"${AS[@]}" "$PG_BIN/initdb" -D "$T/data" -U bench --auth=trust --encoding=UTF8 --locale=C >/dev/null
"${AS[@]}" "$PG_BIN/pg_ctl" -D "$T/data" -l "$T/log" -w -o "-p $PORT -k $T -c listen_addresses=127.0.0.1 -c max_connections=200" start >/dev/null
for n in ${BENCH_PG_NODES:-1 2}; do
  db="bench_$n"
  "${AS[@]}" "$PG_BIN/psql" -h 127.0.0.1 -p "$PORT" -U bench -d postgres -qc "CREATE DATABASE $db" >/dev/null
  echo "== PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}'), $n node(s)"
  BENCH_DATABASE_URL="postgres://bench@127.0.0.1:$PORT/$db" BENCH_NODES=$n node bench/run.mjs
  echo
done
