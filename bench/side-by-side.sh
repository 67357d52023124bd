# Sourced by bench/cpu-per-request.sh and bench/latency.sh: starts the same-stack skeleton
# (../shared/bench/skeleton.mjs) and the built vault side by side on a fresh temporary directory,
# waits until both answer /health, creates the secret `bench` in the vault, and stops both on exit.
# In: SK_PORT, PJ_PORT (ports), SKELETON (path to skeleton.mjs; default ../shared/bench/skeleton.mjs).
# Out: P (project root), T (temporary directory), MK (master key), SK, PJ (the servers' pids),
#   $T/post.lua (wrk's POST /secrets script).
P=$(pwd); T=$(mktemp -d)
SKELETON=${SKELETON:-$P/../shared/bench/skeleton.mjs}
[ -f "$P/bin/ephemeral-vault.js" ] && [ -f "$SKELETON" ] || { echo "run from the project root; skeleton not found at $SKELETON"; exit 1; }
command -v wrk >/dev/null || { echo "needs wrk (apt-get install wrk)"; exit 1; }
cp "$SKELETON" "$T/" && ln -s "$P/node_modules" "$T/node_modules"
MK=benchbenchbenchbenchbenchbench0123456789
read -r LPUB LKEY < <(node "$(dirname "$SKELETON")/license.mjs")
cat > "$T/post.lua" <<'L'
wrk.method = "POST"
wrk.body   = '{"value":"benchmark-value-0123456789","ttl_seconds":3600}'
wrk.headers["Content-Type"] = "application/json"
L
(cd "$T" && DB="$T/skel.db" PORT=$SK_PORT SYNC=FULL GROUP=1 exec node skeleton.mjs >/dev/null 2>&1) & SK=$!
(VAULT_PORT=$PJ_PORT VAULT_DATA_DIR="$T/proj" VAULT_MASTER_KEY=$MK VAULT_LOG_LEVEL=error VAULT_LICENSE_PUBLIC_KEY="$LPUB" \
  VAULT_LICENSE_KEY="$LKEY" exec node "$P/bin/ephemeral-vault.js" >"$T/proj.log" 2>&1) & PJ=$!
trap 'kill $SK $PJ 2>/dev/null; rm -rf "$T"' EXIT
for port in $SK_PORT $PJ_PORT; do
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.1; done
done
curl -sf -X POST -H "Authorization: Bearer $MK" -H 'Content-Type: application/json' \
  -d '{"key":"bench","value":"benchmark-value-0123456789"}' "http://127.0.0.1:$PJ_PORT/secrets" >/dev/null ||
  { echo "could not create the bench secret: $(tail -3 "$T/proj.log")"; exit 1; }
