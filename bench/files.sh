#!/usr/bin/env bash
# bench/files.mjs on both engines (docs/performance.md, "Files"): SQLite on a temporary data directory,
# then PostgreSQL on a throwaway cluster from Debian's `postgresql` package (initdb in a temp dir,
# 127.0.0.1 only, fsync and synchronous_commit on), as bench/pg.sh makes it.
# Usage, from the project root after `npm run build`: bash bench/files.sh
# Env: as bench/files.mjs (BENCH_FILE_MIB, BENCH_FILE_ROUNDS, BENCH_FILE_CONCURRENCY, BENCH_SECONDS);
# PG_BIN (default: the newest /usr/lib/postgresql/*/bin).
set -eu
echo "## SQLite"
node bench/files.mjs
PG_BIN=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
[ -x "$PG_BIN/initdb" ] || { echo "no PostgreSQL binaries (apt-get install postgresql): PostgreSQL skipped"; exit 0; }
T=$(mktemp -d); PORT=$((20000 + RANDOM % 20000))
AS=(); if [ "$(id -u)" = 0 ]; then chown postgres "$T"; AS=(runuser -u postgres --); fi
trap '"${AS[@]}" "$PG_BIN/pg_ctl" -D "$T/data" -m fast stop >/dev/null 2>&1 || true; rm -rf "$T"' EXIT
"${AS[@]}" "$PG_BIN/initdb" -D "$T/data" -U bench --auth=trust --encoding=UTF8 --locale=C >/dev/null
"${AS[@]}" "$PG_BIN/pg_ctl" -D "$T/data" -l "$T/log" -w -o "-p $PORT -k $T -c listen_addresses=127.0.0.1" start >/dev/null
"$PG_BIN/psql" -h 127.0.0.1 -p "$PORT" -U bench -qAt -d postgres -c "CREATE DATABASE files" >/dev/null
echo "## PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}')"
BENCH_DATABASE_URL="postgres://bench@127.0.0.1:$PORT/files" node bench/files.mjs
