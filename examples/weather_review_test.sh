#!/usr/bin/env bash
# Checks the weather_review example end to end: each decision is taken by a new process.
set -euo pipefail
bin="$1"
dir="$(mktemp -d)"; trap 'rm -rf "$dir"' EXIT
db="$dir/weather.db"
fail() { echo "FAIL: $*" >&2; exit 1; }

out=$("$bin" --db "$db" --thread t1 ask "What's the weather in Paris?")
grep -q "PAUSED for review" <<<"$out" || fail "ask did not pause: $out"
grep -q '"city": "Paris"' <<<"$out" || fail "proposed call lacks the city: $out"

out=$("$bin" --db "$db" --thread t1 update London)
grep -q "DONE: Here is what I found: It's sunny in London" <<<"$out" || fail "update: $out"

"$bin" --db "$db" --thread t2 ask "What's the weather in Oslo?" >/dev/null
out=$("$bin" --db "$db" --thread t2 continue)
grep -q "sunny in Oslo" <<<"$out" || fail "continue: $out"

"$bin" --db "$db" --thread t3 ask "What's the weather in Rome?" >/dev/null
out=$("$bin" --db "$db" --thread t3 cancel "Never mind, I'll look outside.")
grep -q "DONE: Understood, I won't look anything up" <<<"$out" || fail "cancel: $out"

# Nothing is pending any more: a second answer is refused, not silently ignored.
if "$bin" --db "$db" --thread t1 continue 2>"$dir/err"; then fail "resume of a finished thread succeeded"; fi
grep -q "conflict" "$dir/err" || fail "unexpected error: $(cat "$dir/err")"
echo "weather_review: 4 passed, 0 failed"
