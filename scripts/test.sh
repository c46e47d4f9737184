#!/usr/bin/env bash
# Builds Tollgate and runs a test tier. Installs missing Debian packages first.
#   scripts/test.sh            fast tier (unit, conformance, golden, scenarios)
#   scripts/test.sh slow       slow tier (crash safety, long threads)
#   scripts/test.sh sanitize   fast tier under AddressSanitizer + UndefinedBehaviorSanitizer
#   scripts/test.sh browser    the review console in headless Chromium (scripts/test-e2e.sh)
#   scripts/test.sh all        every tier, then the sanitizer build
set -euo pipefail
cd "$(dirname "$0")/.."
tier="${1:-fast}"
jobs="${TOLLGATE_JOBS:-$(nproc)}"

run_ctest() {  # run_ctest BUILD_DIR CTEST_ARGS...
  local dir="$1"; shift
  (cd "$dir" && ctest --output-on-failure --timeout 300 -j "$jobs" "$@")
}

case "$tier" in
  fast)     scripts/build.sh release;  run_ctest build -LE 'slow|browser' ;;
  slow)     scripts/build.sh release;  run_ctest build -L slow ;;
  sanitize) scripts/build.sh sanitize; run_ctest build-sanitize -LE 'slow|browser' ;;
  browser)  scripts/test-e2e.sh ;;
  all)      scripts/build.sh release;  run_ctest build
            scripts/build.sh sanitize; run_ctest build-sanitize -LE 'slow|browser' ;;
  *) echo "unknown tier: $tier (fast|slow|sanitize|browser|all)" >&2; exit 2 ;;
esac
