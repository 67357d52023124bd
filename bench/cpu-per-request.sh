#!/usr/bin/env bash
# CPU time per request of the vault and of the same-stack skeleton (../shared/bench/skeleton.mjs),
# side by side: a measure that shared, noisy machines disturb far less than req/s.
# Usage, from the project root after `npm run build`: bench/cpu-per-request.sh  (needs wrk)
# Env: DUR seconds per measurement (5), CONN connections (50), SKELETON path to skeleton.mjs.
# Prints, per server and request: req/s, p99 latency, and the server process's user+system CPU
# microseconds per request (from /proc/PID/stat, so Linux only).
set -u
P=$(pwd); T=$(mktemp -d); DUR=${DUR:-5}; CONN=${CONN:-50}
SKELETON=${SKELETON:-$P/../shared/bench/skeleton.mjs}
[ -f "$P/bin/ephemeral-vault.js" ] && [ -f "$SKELETON" ] || { echo "run from the project root; skeleton not found at $SKELETON"; exit 1; }
cp "$SKELETON" "$T/" && ln -s "$P/node_modules" "$T/node_modules"
MK=benchbenchbenchbenchbenchbench0123456789
read -r LPUB LKEY < <(node "$(dirname "$SKELETON")/license.mjs")
cat > "$T/post.lua" <<'L'
wrk.method = "POST"
wrk.body   = '{"value":"benchmark-value-0123456789","ttl_seconds":3600}'
wrk.headers["Content-Type"] = "application/json"
L
(cd "$T" && DB="$T/skel.db" PORT=18290 SYNC=FULL GROUP=1 exec node skeleton.mjs >/dev/null 2>&1) & SK=$!
(VAULT_PORT=18291 VAULT_DATA_DIR="$T/proj" VAULT_MASTER_KEY=$MK VAULT_LOG_LEVEL=error VAULT_LICENSE_PUBLIC_KEY="$LPUB" \
  VAULT_LICENSE_KEY="$LKEY" exec node "$P/bin/ephemeral-vault.js" >"$T/proj.log" 2>&1) & PJ=$!
trap 'kill $SK $PJ 2>/dev/null; rm -rf "$T"' EXIT
for port in 18290 18291; do
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.1; done
done
curl -sf -X POST -H "Authorization: Bearer $MK" -H 'Content-Type: application/json' \
  -d '{"key":"bench","value":"benchmark-value-0123456789"}' http://127.0.0.1:18291/secrets >/dev/null
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
