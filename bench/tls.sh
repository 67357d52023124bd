#!/usr/bin/env bash
# HTTPS built in against plain HTTP, one build, one run (docs/performance.md "HTTPS"): two
# vaults of this checkout side by side, one with VAULT_TLS_CERT / VAULT_TLS_KEY (an EC P-256
# certificate made by openssl), measured in alternation so both see the same noise.
# Usage, from the project root after `npm run build`: bench/tls.sh [ROUNDS]  (needs wrk and openssl)
# Env: DUR seconds per measurement (5), CONN connections (50).
# Prints the median req/s, p99 (ms) and server CPU microseconds per request (user + system, from
# /proc/PID/stat: the figure to read on a shared machine) per scenario, with every round. get and post: wrk keeps
# its connections open (keep-alive clients, the handshakes are in the warm-up); get_close:
# `Connection: close`, a new connection (over HTTPS a full handshake) for every request.
set -u
ROUNDS=${1:-3}; DUR=${DUR:-5}; CONN=${CONN:-50}
P=$(pwd); T=$(mktemp -d)
[ -f "$P/bin/ephemeral-vault.js" ] || { echo "run from the project root"; exit 1; }
MK=benchbenchbenchbenchbenchbench0123456789
# A license lifts the free tier's 100 active secrets (the POST scenario creates thousands).
LPUB=$(node bin/ephemeral-vault.js license keygen --private-key "$T/issuer.pem" 2>/dev/null | sed 's/^VAULT_LICENSE_PUBLIC_KEY=//')
LKEY=$(node bin/ephemeral-vault.js license issue --private-key "$T/issuer.pem" --subject bench)
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=localhost \
  -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" -keyout "$T/key.pem" -out "$T/cert.pem" 2>/dev/null
cat > "$T/post.lua" <<'L'
wrk.method = "POST"
wrk.body   = '{"value":"benchmark-value-0123456789","ttl_seconds":3600}'
wrk.headers["Content-Type"] = "application/json"
L
start() { # port extra-env...
  local port=$1; shift
  (exec env "$@" VAULT_PORT="$port" VAULT_DATA_DIR="$T/$port" VAULT_MASTER_KEY=$MK VAULT_LOG_LEVEL=error \
    VAULT_LICENSE_PUBLIC_KEY="$LPUB" VAULT_LICENSE_KEY="$LKEY" node bin/ephemeral-vault.js >"$T/$port.log" 2>&1) &
  echo $!
}
PH=$(start 18701 VAULT_SWEEP_INTERVAL_MS=1000)
PS=$(start 18702 VAULT_TLS_CERT="$T/cert.pem" VAULT_TLS_KEY="$T/key.pem")
trap 'kill $PH $PS 2>/dev/null; rm -rf "$T"' EXIT
HTTP=http://127.0.0.1:18701; HTTPS=https://127.0.0.1:18702
for base in $HTTP $HTTPS; do
  for _ in $(seq 100); do curl -skf "$base/health" >/dev/null && break; sleep 0.1; done
  curl -skf -X POST -H "Authorization: Bearer $MK" -H 'Content-Type: application/json' \
    -d '{"key":"bench","value":"benchmark-value-0123456789"}' "$base/secrets" >/dev/null \
    || { echo "the vault at $base did not start"; exit 1; }
  wrk -t1 -c"$CONN" -d1s -H "Authorization: Bearer $MK" "$base/secrets/bench" >/dev/null # warm-up
done
tick=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
measure() { # pid wrk-args -> "req/s p99ms cpu-us-per-request"
  local pid=$1 c0 c1 out; shift
  c0=$(cpu "$pid"); out=$(wrk -t1 -c"$CONN" -d"${DUR}s" --latency "$@" 2>/dev/null); c1=$(cpu "$pid")
  echo "$out" | awk -v cpu=$(( (c1 - c0) * 1000000 / tick )) '
    /requests in/ {n=$1}
    /Requests\/sec/ {r=int($2)}
    $1=="99%" {v=$2; if (v ~ /us$/) {sub(/us$/,"",v); v=v/1000} else if (v ~ /ms$/) {sub(/ms$/,"",v)} else if (v ~ /s$/) {sub(/s$/,"",v); v=v*1000}; p=v}
    END {printf "%d %.2f %d\n", r, p, (n > 0 ? cpu / n : 0)}'
}
declare -A R
for r in $(seq "$ROUNDS"); do
  for scheme in http https; do
    base=$HTTP; pid=$PH; [ $scheme = https ] && base=$HTTPS && pid=$PS
    R[get_$scheme]+="$(measure $pid -H "Authorization: Bearer $MK" "$base/secrets/bench");"
    R[post_$scheme]+="$(measure $pid -s "$T/post.lua" -H "Authorization: Bearer $MK" "$base/secrets");"
    R[get_close_$scheme]+="$(measure $pid -H "Connection: close" -H "Authorization: Bearer $MK" "$base/secrets/bench");"
  done
  echo "round $r of $ROUNDS measured" >&2
done
for k in get_http get_https post_http post_https get_close_http get_close_https; do
  echo "$k ${R[$k]}" | python3 -c '
import sys, statistics as s
name, rounds = sys.stdin.read().split(" ", 1)
xs = [tuple(map(float, r.split())) for r in rounds.strip().strip(";").split(";")]
print(f"{name:15} req/s {int(s.median(x[0] for x in xs)):6}  p99_ms {s.median(x[1] for x in xs):6.2f}  cpu_us/request {int(s.median(x[2] for x in xs)):5}   rounds {xs}")'
done
