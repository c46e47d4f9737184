#!/usr/bin/env bash
# Builds Tollgate (installing missing Debian packages first) and runs the main job: the
# weather review example, paused in one process and resumed in another on a SQLite file.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh release >/dev/null
bin=build/examples/weather_review
db="${TOLLGATE_DB:-weather.db}"
thread="demo-$(date +%s)"
echo "== process 1: ask, and pause before the tool runs"
"$bin" --db "$db" --thread "$thread" ask "What's the weather in Paris?"
echo "== process 2: the reviewer changes the city to London and approves"
"$bin" --db "$db" --thread "$thread" update London
echo "== the thread's final state is in $db (thread $thread):"
"$bin" --db "$db" --thread "$thread" show | head -40
