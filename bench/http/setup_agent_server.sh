#!/usr/bin/env bash
# Prepares the JS reference Agent Server for the HTTP benchmark in bench/.peers/agent-server
# (git-ignored): copies shared/peers/agent-server there, installs it the first time (`npm ci
# --legacy-peer-deps`, plus langchain for createAgent, same versions as the LangGraph.js peer
# harness), and registers bench/http/agent_graph.ts as the graph "agent".
# Environment: TOLLGATE_PEERS_DIR (default: ../shared/peers next to the repository).
# Exit status non-zero when node/npm or the peer's sources are missing.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
peers="${TOLLGATE_PEERS_DIR:-$(dirname "$repo")/shared/peers}"
source_dir="$peers/agent-server"
target="$repo/bench/.peers/agent-server"
log() { echo "[http-setup] $*" >&2; }

command -v node >/dev/null && command -v npm >/dev/null || { log "node/npm not found"; exit 1; }
[ -f "$source_dir/package.json" ] || { log "no agent server at $source_dir"; exit 1; }

mkdir -p "$target"
for f in package.json package-lock.json langgraph.json start.sh; do
  cp -f "$source_dir/$f" "$target/$f"
done
mkdir -p "$target/src"
cp -f "$source_dir/src/graph.ts" "$target/src/graph.ts"
chmod -R u+w "$target"

if [ ! -x "$target/node_modules/.bin/langgraphjs" ]; then
  log "npm ci in $target (first time, ~1 min)"
  (cd "$target" && npm ci --legacy-peer-deps --no-audit --no-fund >&2)
fi
if [ ! -f "$target/node_modules/langchain/package.json" ]; then
  log "adding langchain 1.5.14 (createAgent) to $target"
  (cd "$target" && npm install --no-save --legacy-peer-deps --no-audit --no-fund \
    langchain@1.5.14 zod@4.6.7 >&2)
fi

cp -f "$here/agent_graph.ts" "$target/src/bench_agent.ts"
node -e '
  const fs = require("fs");
  const file = process.argv[1];
  const config = JSON.parse(fs.readFileSync(file, "utf8"));
  config.graphs.agent = "./src/bench_agent.ts:agent";
  fs.writeFileSync(file, JSON.stringify(config, null, 2) + "\n");
' "$target/langgraph.json"
log "ready: $target"
