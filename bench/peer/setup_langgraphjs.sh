#!/usr/bin/env bash
# Copies the read-only LangGraph.js peer harness into bench/.peers/langgraphjs (git-ignored)
# and installs its pinned dependencies with `npm ci` from the npm registry. Idempotent: a
# copy whose package-lock.json matches the source and whose better-sqlite3 loads is kept.
#   bench/peer/setup_langgraphjs.sh [peer-source-dir]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bench_dir="$(dirname "$here")"
src="${1:-${TOLLGATE_PEERS_DIR:-$bench_dir/../../shared/peers}/langgraphjs}"
dst="$bench_dir/.peers/langgraphjs"

if [ ! -f "$src/bench.mjs" ]; then
  echo "peer harness not found at $src (set TOLLGATE_PEERS_DIR)" >&2
  exit 2
fi
command -v node >/dev/null && command -v npm >/dev/null || { echo "node and npm are required" >&2; exit 2; }

mkdir -p "$dst"
if [ -d "$dst/node_modules" ] && cmp -s "$src/package-lock.json" "$dst/package-lock.json" &&
   (cd "$dst" && node -e "require('better-sqlite3')" 2>/dev/null); then
  # Refresh the harness itself (cheap) in case the source changed.
  cp "$src/bench.mjs" "$src/summarize.mjs" "$src/README.md" "$dst/"
  exit 0
fi

echo "[peer] installing LangGraph.js harness into $dst (npm ci; compiles better-sqlite3, ~2 min CPU)" >&2
cp "$src/bench.mjs" "$src/summarize.mjs" "$src/README.md" "$src/package.json" "$src/package-lock.json" "$dst/"
# npm cannot download Node headers (only the npm registry is reachable): build native
# modules against the locally installed ones.
[ -f /usr/include/node/node.h ] && export npm_config_nodedir=/usr
(cd "$dst" && npm ci --no-audit --no-fund --loglevel=error >&2)
(cd "$dst" && node -e "require('better-sqlite3')") || { echo "[peer] better-sqlite3 does not load" >&2; exit 1; }
echo "[peer] ready" >&2
