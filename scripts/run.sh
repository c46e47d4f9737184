#!/usr/bin/env bash
# The main job: builds Tollgate and the review console (installing missing Debian and npm
# packages first) and starts `tollgate serve` on http://127.0.0.1:2024 with the demo agent,
# on the SQLite file ./tollgate.db. Extra arguments go to `tollgate serve` (e.g. --port 8080,
# --model openai:gpt-4.1-mini). Stop it with Ctrl-C; paused threads survive restarts.
set -euo pipefail
cd "$(dirname "$0")/.."
log="$(mktemp)"; trap 'rm -f "$log"' EXIT
echo "Building Tollgate (the first build takes several minutes)..."
if ! scripts/build.sh release >"$log" 2>&1; then
  cat "$log" >&2
  echo "run: the build failed (output above)" >&2
  exit 1
fi
if ! scripts/build-web.sh; then
  echo "run: the review console could not be built; the API still runs (see above)" >&2
fi
rm -f "$log"
exec build/src/main/tollgate serve --db ./tollgate.db --console web/dist "$@"
