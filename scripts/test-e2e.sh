#!/usr/bin/env bash
# End-to-end tests of the review console in headless Chromium (Debian's chromium; never a
# downloaded browser). Against the JS reference Agent Server with a scripted graph by default;
# TOLLGATE_E2E_SERVER=tollgate runs them against build/src/main/tollgate serve instead.
# Screenshots of the main states go to docs/images/.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

# Debian's chromium through the shared idempotent installer (quiet when already there).
"$root/scripts/deps.sh" chromium
if ! command -v npm >/dev/null 2>&1; then
  echo "test-e2e: node and npm are required" >&2
  exit 1
fi

"$root/scripts/build-web.sh"

cd "$root/tests/e2e"
want="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [ ! -f node_modules/.tollgate-lock.sha256 ] || [ "$(cat node_modules/.tollgate-lock.sha256)" != "$want" ]; then
  npm ci --no-audit --no-fund --loglevel=error >/dev/null
  echo "$want" >node_modules/.tollgate-lock.sha256
fi
exec node --test --test-concurrency=1 --test-reporter=spec console.test.mjs
