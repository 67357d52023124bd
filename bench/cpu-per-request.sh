#!/usr/bin/env bash
# CPU time per request of the vault and of the same-stack skeleton (../shared/bench/skeleton.mjs),
# side by side: a measure that shared, noisy machines disturb far less than req/s.
# Usage, from the project root after `npm run build`: bench/cpu-per-request.sh  (needs wrk)
# Env: DUR seconds per measurement (5), CONN connections (50), SKELETON path to skeleton.mjs.
# Prints, per server and request: req/s, p99 latency, and the server process's user+system CPU
# microseconds per request (from /proc/PID/stat, so Linux only).
set -u
DUR=${DUR:-5}; CONN=${CONN:-50}
SK_PORT=18290 PJ_PORT=18291
# shellcheck source=bench/side-by-side.sh
. "$(dirname "$0")/side-by-side.sh"
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
tick=$(getconf CLK_TCK)
measure() { # pid label wrk-args...
  local pid=$1 label=$2; shift 2
  local c0 c1 out n rps p99
  c0=$(cpu "$pid"); out=$(wrk -t1 -c"$CONN" -d"${DUR}s" --latency "$@" 2>/dev/null); c1=$(cpu "$pid")
  n=$(echo "$out" | awk '/requests in/ {print $1}'); rps=$(echo "$out" | awk '/Requests\/sec/ {print int($2)}')
  p99=$(echo "$out" | awk '$1 == "99%" {print $2}')
  echo "$label req/s=$rps p99=$p99 cpu_us_per_request=$(( (c1 - c0) * 1000000 / tick / n ))"
}
measure $SK "skeleton GET " http://127.0.0.1:18290/secrets/bench
measure $PJ "vault    GET " -H "Authorization: Bearer $MK" http://127.0.0.1:18291/secrets/bench
measure $SK "skeleton POST" -s "$T/post.lua" http://127.0.0.1:18290/secrets
measure $PJ "vault    POST" -s "$T/post.lua" -H "Authorization: Bearer $MK" http://127.0.0.1:18291/secrets
