#!/usr/bin/env bash
# Runs the Agent Server integration tests: the official @langchain/langgraph-sdk client
# (pinned in tests/integration/package-lock.json) drives a real `tollgate serve`.
#   scripts/test-integration.sh [path/to/tollgate]     (default: build/src/main/tollgate)
#   TOLLGATE_IT_FILES="a.test.mjs b.test.mjs" runs only those files (default: every *.test.mjs)
#   TOLLGATE_IT_POSTGRES=1 serves each test file from a fresh database on the PostgreSQL server
#   of TOLLGATE_TEST_PG_URL (scripts/pg.sh run) instead of a SQLite file
#   TOLLGATE_IT_REPLICAS=N (with TOLLGATE_IT_POSTGRES=1) serves each test file from N replicas on
#   its database behind a round-robin proxy (tests/integration/harness.mjs)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
binary="${1:-${TOLLGATE_BIN:-$root/build/src/main/tollgate}}"
if [ ! -x "$binary" ]; then
  echo "test-integration: no tollgate executable at $binary (build the tollgate_cli target)" >&2
  exit 2
fi
binary="$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")"
if [ "${TOLLGATE_IT_POSTGRES:-0}" = 1 ]; then
  [ -n "${TOLLGATE_TEST_PG_URL:-}" ] || { echo "test-integration: TOLLGATE_IT_POSTGRES=1 needs TOLLGATE_TEST_PG_URL (scripts/pg.sh run)" >&2; exit 2; }
  export TOLLGATE_TEST_DB_URL="$TOLLGATE_TEST_PG_URL"
fi
cd "$root/tests/integration"
if [ ! -d node_modules/@langchain/langgraph-sdk ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error
fi
# shellcheck disable=SC2086 # the file list is split (and globbed) on purpose
TOLLGATE_BIN="$binary" node --test --test-concurrency=1 ${TOLLGATE_IT_FILES:-./*.test.mjs}
