#!/usr/bin/env bash
# End-to-end tests of the review console in headless Chromium (Debian's chromium, driven by
# playwright-core; never a downloaded browser) against a real `tollgate serve` running the
# scripted agents of tests/e2e/tollgate-e2e.json. Screenshots of the main states go to
# docs/images/ (TOLLGATE_E2E_SCREENSHOTS=DIR to write them elsewhere).
#   scripts/test-e2e.sh                     build the server (build/) and the console, run
#   scripts/test-e2e.sh --bin PATH          use this tollgate executable (CTest passes its own)
#   scripts/test-e2e.sh --reference         against the JS reference Agent Server instead
#   scripts/test-e2e.sh -- --test-name-pattern=inbox   extra arguments for `node --test`
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
server=tollgate
binary="${TOLLGATE_BIN:-}"
while [ $# -gt 0 ]; do
  case "$1" in
    --reference) server=reference; shift ;;
    --bin) binary="$2"; shift 2 ;;
    --) shift; break ;;
    *) echo "test-e2e: unknown argument $1 (--bin PATH | --reference | -- NODE_TEST_ARGS)" >&2; exit 2 ;;
  esac
done

# Debian's chromium through the shared idempotent installer (quiet when already there).
if ! "$root/scripts/deps.sh" chromium; then
  echo "test-e2e: chromium is missing and could not be installed; run: sudo apt-get install chromium" >&2
  exit 1
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "test-e2e: node and npm are required (apt-get install nodejs npm)" >&2
  exit 1
fi

if [ "$server" = tollgate ]; then
  if [ -z "$binary" ]; then
    # Only the server executable, in the release tree scripts/build.sh uses.
    launcher=(); command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
    cmake -S "$root" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" >/dev/null
    cmake --build "$root/build" --target tollgate_cli -j "${TOLLGATE_JOBS:-$(nproc)}" >/dev/null
    binary="$root/build/src/main/tollgate"
  fi
  if [ ! -x "$binary" ]; then
    echo "test-e2e: no tollgate executable at $binary" >&2
    exit 2
  fi
  export TOLLGATE_BIN="$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")"
fi
export TOLLGATE_E2E_SERVER="$server"

"$root/scripts/build-web.sh"

cd "$root/tests/e2e"
want="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [ ! -f node_modules/.tollgate-lock.sha256 ] || [ "$(cat node_modules/.tollgate-lock.sha256)" != "$want" ]; then
  npm ci --no-audit --no-fund --loglevel=error >/dev/null
  echo "$want" >node_modules/.tollgate-lock.sha256
fi
exec node --test --test-concurrency=1 --test-reporter=spec "$@" console.test.mjs auth.test.mjs claims.test.mjs effects.test.mjs timeline.test.mjs
