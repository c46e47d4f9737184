#!/usr/bin/env bash
# Builds the review console into web/dist (served by `tollgate serve` at /).
# Quiet and idempotent: installs node modules only when package-lock.json changed, rebuilds
# only when a source file is newer than the last build. Prints output only on failure.
# Usage: scripts/build-web.sh [--force]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
web="$root/web"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT

if ! command -v npm >/dev/null 2>&1; then
  echo "build-web: npm is not installed (apt-get install nodejs npm)" >&2
  exit 1
fi

cd "$web"
stamp="node_modules/.tollgate-lock.sha256"
want="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  if ! npm ci --legacy-peer-deps --no-audit --no-fund --loglevel=error >"$log" 2>&1; then
    cat "$log" >&2
    echo "build-web: npm ci failed" >&2
    exit 1
  fi
  echo "$want" >"$stamp"
fi

if [ "${1:-}" != "--force" ] && [ -f dist/index.html ] &&
  [ -z "$(find src index.html vite.config.ts tsconfig.json package-lock.json -newer dist/index.html -print -quit)" ]; then
  exit 0
fi
if ! npm run --silent build >"$log" 2>&1; then
  cat "$log" >&2
  echo "build-web: build failed" >&2
  exit 1
fi
