#!/usr/bin/env bash
# Warm latency of the vault's GET /secrets/:key beside the same-stack skeleton (../shared/bench/skeleton.mjs),
# alternating, so both see the same noise: the p99 target of docs/performance.md (under 10 ms at 50 connections).
# Usage, from the project root after `npm run build`: bench/latency.sh  (needs wrk: apt-get install wrk)
# Env: DUR seconds per measurement (8), WARM warm-up seconds per server (3), ROUNDS (3), CONN connections (50),
#   MODE get|post (get), SKELETON path to skeleton.mjs.
# Prints per round and server: req/s, p50, p90, p99 (ms); then the median p99 of each server.
set -u
DUR=${DUR:-8}; WARM=${WARM:-3}; ROUNDS=${ROUNDS:-3}; CONN=${CONN:-50}; MODE=${MODE:-get}
SK_PORT=18490 PJ_PORT=18491
# shellcheck source=bench/side-by-side.sh
. "$(dirname "$0")/side-by-side.sh"

target() { # port -> wrk arguments
  if [ "$MODE" = post ]; then echo "-s $T/post.lua http://127.0.0.1:$1/secrets"; else echo "http://127.0.0.1:$1/secrets/bench"; fi
}
# wrk prints latencies as 812.00us, 3.12ms or 1.02s: in ms.
ms() { awk '{ v = $1; if (v ~ /us$/) { sub(/us$/, "", v); v /= 1000 } else if (v ~ /ms$/) { sub(/ms$/, "", v) } else if (v ~ /s$/) { sub(/s$/, "", v); v *= 1000 } printf "%.2f", v }'; }
measure() { # name port
  # shellcheck disable=SC2046
  wrk -t1 -c"$CONN" -d"${WARM}s" -H "Authorization: Bearer $MK" $(target "$2") >/dev/null 2>&1
  # shellcheck disable=SC2046
  out=$(wrk -t1 -c"$CONN" -d"${DUR}s" --latency -H "Authorization: Bearer $MK" $(target "$2") 2>/dev/null)
  rps=$(echo "$out" | awk '/Requests\/sec/ {print int($2)}')
  p50=$(echo "$out" | awk '$1 == "50%" {print $2}' | ms); p90=$(echo "$out" | awk '$1 == "90%" {print $2}' | ms)
  p99=$(echo "$out" | awk '$1 == "99%" {print $2}' | ms)
  printf '%-9s %6s req/s  p50 %6s  p90 %6s  p99 %6s ms\n' "$1" "$rps" "$p50" "$p90" "$p99"
  echo "$p99" >>"$T/$1.p99"
}
for r in $(seq "$ROUNDS"); do
  echo "round $r ($MODE, $CONN connections)"
  measure vault 18491
  measure skeleton 18490
done
med() { sort -n "$1" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "median p99: vault $(med "$T/vault.p99") ms, skeleton $(med "$T/skeleton.p99") ms"
