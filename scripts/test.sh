#!/usr/bin/env bash
# Builds Tollgate and runs a test tier. Installs missing Debian packages first.
#   scripts/test.sh            fast tier (unit, conformance, golden, scenarios)
#   scripts/test.sh slow       slow tier (crash safety, long threads)
#   scripts/test.sh postgres   the PostgreSQL tier (label postgres) against a private server that
#                              scripts/pg.sh starts and stops
#   scripts/test.sh sanitize   fast tier under AddressSanitizer + UndefinedBehaviorSanitizer
#   scripts/test.sh browser    the review console in headless Chromium (scripts/test-e2e.sh)
#   scripts/test.sh fuzz       each libFuzzer target of fuzz/ for TOLLGATE_FUZZ_SECONDS (default 60)
#                              under ASan + UBSan, from its committed corpus; fails on any crash
#   scripts/test.sh all        every tier, then the sanitizer build
set -euo pipefail
cd "$(dirname "$0")/.."
tier="${1:-fast}"
jobs="${TOLLGATE_JOBS:-$(nproc)}"

run_ctest() {  # run_ctest BUILD_DIR CTEST_ARGS...
  local dir="$1"; shift
  (cd "$dir" && ctest --output-on-failure --timeout 300 -j "$jobs" "$@")
}

# run_postgres BUILD_DIR: the tests labelled postgres, against a private server (scripts/pg.sh)
# that lives as long as they run. Those tests read its URL from TOLLGATE_TEST_PG_URL.
run_postgres() {
  local dir="$1"
  scripts/pg.sh run bash -c "cd '$dir' && ctest --output-on-failure --timeout 300 -j '$jobs' -L postgres"
}

# run_fuzz: every target in build-fuzz/fuzz for $TOLLGATE_FUZZ_SECONDS seconds. New inputs go to
# build-fuzz/corpus/NAME (the committed fuzz/corpus/NAME is only read); a crash leaves its
# input in build-fuzz/crashes/NAME/ — add it to fuzz/corpus/NAME, where the fast tier replays it.
run_fuzz() {
  local seconds="${TOLLGATE_FUZZ_SECONDS:-60}" passed=0 failed=0 target name
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
  for target in build-fuzz/fuzz/fuzz_*; do
    name="${target##*/fuzz_}"
    mkdir -p "build-fuzz/corpus/$name" "build-fuzz/crashes/$name"
    echo "fuzz $name: ${seconds}s"
    if "$target" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="build-fuzz/crashes/$name/" "build-fuzz/corpus/$name" "fuzz/corpus/$name" \
        >"build-fuzz/fuzz_$name.log" 2>&1; then
      passed=$((passed + 1))
      grep -E '^stat::number_of_executed_units|^#[0-9]+.*DONE' "build-fuzz/fuzz_$name.log" | tail -2 || true
    else
      failed=$((failed + 1))
      tail -60 "build-fuzz/fuzz_$name.log"
      echo "fuzz $name FAILED; inputs in build-fuzz/crashes/$name/, log in build-fuzz/fuzz_$name.log"
    fi
  done
  echo "fuzz: $passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}

case "$tier" in
  fast)     scripts/build.sh release;  run_ctest build -LE 'slow|browser|postgres' ;;
  slow)     scripts/build.sh release;  run_ctest build -L slow ;;
  postgres) scripts/build.sh release;  run_postgres build ;;
  sanitize) scripts/build.sh sanitize; run_ctest build-sanitize -LE 'slow|browser|postgres' ;;
  browser)  scripts/test-e2e.sh ;;
  fuzz)     scripts/build.sh fuzz;     run_fuzz ;;
  all)      scripts/build.sh release;  run_ctest build -LE postgres; run_postgres build
            scripts/build.sh sanitize; run_ctest build-sanitize -LE 'slow|browser' ;;
  *) echo "unknown tier: $tier (fast|slow|postgres|sanitize|browser|fuzz|all)" >&2; exit 2 ;;
esac
