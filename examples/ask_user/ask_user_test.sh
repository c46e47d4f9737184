#!/usr/bin/env bash
# Checks the ask_user example: the question pauses the run; the answer, given by a new
# process, becomes the tool's result and the agent's reply uses it.
set -euo pipefail
bin="$1"
dir="$(mktemp -d)"; trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

out=$("$bin" --db "$dir/trip.db" demo)
grep -q "QUESTION: Which city would you like to visit?" <<<"$out" || fail "demo did not ask: $out"
grep -q "DONE: Booked a weekend in Porto" <<<"$out" || fail "demo answer not used: $out"

out=$("$bin" --db "$dir/trip.db" --thread t1 start "plan a weekend trip")
grep -q "QUESTION: Which city" <<<"$out" || fail "start did not pause: $out"
out=$("$bin" --db "$dir/trip.db" --thread t1 answer "Lisbon")
grep -q "DONE: Booked a weekend in Lisbon: train on Friday" <<<"$out" || fail "answer: $out"

# Nothing is pending any more: a second answer is refused.
if "$bin" --db "$dir/trip.db" --thread t1 answer "Rome" 2>"$dir/err"; then fail "second answer accepted"; fi
grep -q "conflict" "$dir/err" || fail "unexpected error: $(cat "$dir/err")"
echo "ask_user: all checks passed"
