#!/usr/bin/env bash
# End-to-end tests of the review console in headless Chromium (Debian's chromium; never a
# downloaded browser). Against the JS reference Agent Server with a scripted graph by default;
# TOLLGATE_E2E_SERVER=tollgate runs them against build/src/main/tollgate serve instead.
# Screenshots of the main states go to docs/images/.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "test-e2e: /usr/bin/chromium is missing (apt-get install chromium)" >&2
    exit 1
  fi
fi

"$root/scripts/build-web.sh"

cd "$root/tests/e2e"
want="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [ ! -f node_modules/.tollgate-lock.sha256 ] || [ "$(cat node_modules/.tollgate-lock.sha256)" != "$want" ]; then
  npm ci --no-audit --no-fund --loglevel=error >/dev/null
  echo "$want" >node_modules/.tollgate-lock.sha256
fi
exec node --test --test-concurrency=1 --test-reporter=spec console.test.mjs
