#!/usr/bin/env bash
# Two builds of the vault side by side, measured in alternation: the before/after of a
# performance change on a shared, noisy machine (both builds see the same noise).
# Usage, from anywhere: bench/ab.sh DIR_A DIR_B [ROUNDS]
#   DIR_A, DIR_B: project roots, each built (`npm run build`), e.g. a `git worktree` of the
#   commit before the change and this checkout. Needs wrk (apt-get install wrk).
# Env: DUR seconds per measurement (3), CONN connections (50), MODE get|post|both (both),
#   EA / EB extra environment for A / B ("NAME=value ...").
# Prints, per build and scenario, the median req/s, the median server CPU microseconds per
# request (user + system, from /proc/PID/stat) and the median event-loop busy microseconds per
# request (bench/loop-busy.mjs, preloaded), then every round.
set -u
A=${1:?usage: bench/ab.sh DIR_A DIR_B [ROUNDS]}; B=${2:?usage: bench/ab.sh DIR_A DIR_B [ROUNDS]}
ROUNDS=${3:-4}; DUR=${DUR:-3}; CONN=${CONN:-50}; MODE=${MODE:-both}
HERE=$(cd "$(dirname "$0")" && pwd)
MK=benchbenchbenchbenchbenchbench0123456789
LICENSE=${LICENSE_SCRIPT:-$HERE/../../shared/bench/license.mjs}
[ -f "$LICENSE" ] || { echo "license script not found at $LICENSE (set LICENSE_SCRIPT)"; exit 1; }
read -r LPUB LKEY < <(node "$LICENSE")
T=$(mktemp -d)
cat > "$T/post.lua" <<'L'
wrk.method = "POST"
wrk.body   = '{"value":"benchmark-value-0123456789","ttl_seconds":3600}'
wrk.headers["Content-Type"] = "application/json"
L
start() { # root port extra-env
  (cd "$1" && exec env ${3:-} VAULT_PORT="$2" VAULT_DATA_DIR="$T/$2" VAULT_MASTER_KEY=$MK VAULT_LOG_LEVEL=error \
    VAULT_LICENSE_PUBLIC_KEY="$LPUB" VAULT_LICENSE_KEY="$LKEY" LOOP_BUSY_OUT="$T/loop-$2" \
    node --import "$HERE/loop-busy.mjs" bin/ephemeral-vault.js >"$T/$2.log" 2>&1) &
  echo $!
}
PA=$(start "$A" 18601 "${EA:-}"); PB=$(start "$B" 18602 "${EB:-}")
trap 'kill $PA $PB 2>/dev/null; rm -rf "$T"' EXIT
for port in 18601 18602; do
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.1; done
  curl -sf -X POST -H "Authorization: Bearer $MK" -H 'Content-Type: application/json' \
    -d '{"key":"bench","value":"benchmark-value-0123456789"}' "http://127.0.0.1:$port/secrets" >/dev/null \
    || { echo "the vault on port $port did not start: $(tail -2 "$T/$port.log")"; exit 1; }
  wrk -t1 -c"$CONN" -d1s -H "Authorization: Bearer $MK" "http://127.0.0.1:$port/secrets/bench" >/dev/null # warm-up
done
tick=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
measure() { # pid port wrk-args... -> "req/s cpu-us loop-us"
  local pid=$1 port=$2 c0 c1 out n; shift 2
  kill -USR2 "$pid"; c0=$(cpu "$pid"); out=$(wrk -t1 -c"$CONN" -d"${DUR}s" "$@" 2>/dev/null); c1=$(cpu "$pid"); kill -USR2 "$pid"
  n=$(echo "$out" | awk '/requests in/ {print $1}'); sleep 0.1
  echo "$(echo "$out" | awk '/Requests\/sec/ {print int($2)}') $(( (c1 - c0) * 1000000 / tick / n )) $(tail -1 "$T/loop-$port" | awk '{print int($1)}')"
}
declare -A R
for _ in $(seq "$ROUNDS"); do
  if [ "$MODE" != post ]; then
    R[get_A]+="$(measure "$PA" 18601 -H "Authorization: Bearer $MK" http://127.0.0.1:18601/secrets/bench);"
    R[get_B]+="$(measure "$PB" 18602 -H "Authorization: Bearer $MK" http://127.0.0.1:18602/secrets/bench);"
  fi
  if [ "$MODE" != get ]; then
    R[post_A]+="$(measure "$PA" 18601 -s "$T/post.lua" -H "Authorization: Bearer $MK" http://127.0.0.1:18601/secrets);"
    R[post_B]+="$(measure "$PB" 18602 -s "$T/post.lua" -H "Authorization: Bearer $MK" http://127.0.0.1:18602/secrets);"
  fi
done
for k in get_A get_B post_A post_B; do
  [ -n "${R[$k]:-}" ] || continue
  echo "$k ${R[$k]}" | python3 -c '
import sys, statistics as s
name, rounds = sys.stdin.read().split(" ", 1)
xs = [tuple(map(int, r.split())) for r in rounds.strip().strip(";").split(";")]
print(f"{name:7} req/s {int(s.median(x[0] for x in xs)):6}  cpu_us/request {int(s.median(x[1] for x in xs)):4}  loop_busy_us/request {int(s.median(x[2] for x in xs)):4}   rounds {xs}")'
done
