#!/usr/bin/env bash
# Checks the email_sql_agent example: what paused, what ran, and what the tools really did.
set -euo pipefail
bin="$1"
dir="$(mktemp -d)"; trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# The number of cancelled orders in work folder $1, asked through the agent (a read: no pause).
count() {
  "$bin" --db "$dir/count.db" --workdir "$dir/$1" --thread "c$RANDOM$RANDOM" ask "how many cancelled orders?" |
    sed -n 's/.*"rows":\[\[\([0-9]*\)\]\].*/\1/p'
}

# In one process: the read does not pause, the write does, the message is re-addressed.
out=$("$bin" --db "$dir/demo.db" --workdir "$dir/w1" demo)
first_pause=$(grep -n "PAUSED" <<<"$out" | head -1 | cut -d: -f1)
read_done=$(grep -n 'DONE: Counted: .*"rows":\[\[4\]\]' <<<"$out" | cut -d: -f1)
[ -n "$read_done" ] || fail "the read did not answer: $out"
[ "$read_done" -lt "$first_pause" ] || fail "the read paused: $out"
grep -q "PAUSED for review: execute_sql .*UPDATE orders SET status" <<<"$out" || fail "write not paused: $out"
grep -q "DONE: Archived: OK: 1 row(s) changed." <<<"$out" || fail "write not run: $out"
grep -q 'PAUSED for review: send_message {"text":"The report is ready.","to":"alice"}' <<<"$out" ||
  fail "message not paused: $out"
grep -q 'DONE: Message handled: Note: a human reviewer replaced this tool call.*"to": "bob"' <<<"$out" ||
  fail "edit not noted: $out"
grep -qx "message sent to bob" <<<"$out" || fail "edit not run: $out"
[ "$(cat "$dir/w1/messages.log")" = "$(printf 'bob\tThe report is ready.')" ] ||
  fail "messages.log: $(cat "$dir/w1/messages.log")"
[ "$(count w1)" = 0 ] || fail "cancelled orders left"

# Across processes: a reject keeps the rows; an approve from a new process deletes them.
db="$dir/agent.db"; w="$dir/w2"
out=$("$bin" --db "$db" --workdir "$w" --thread t1 ask "archive the cancelled orders")
grep -q "PAUSED for review: execute_sql" <<<"$out" || fail "ask: $out"
out=$("$bin" --db "$db" --workdir "$w" --thread t1 reject "not today")
grep -q "DONE: Archived: User rejected the tool call for \`execute_sql\` with reason: not today" <<<"$out" ||
  fail "reject: $out"
[ "$(count w2)" = 1 ] || fail "rejected write ran"
"$bin" --db "$db" --workdir "$w" --thread t2 ask "archive the cancelled orders" >/dev/null
out=$("$bin" --db "$db" --workdir "$w" --thread t2 approve)
grep -q "DONE: Archived: OK: 1 row(s) changed." <<<"$out" || fail "approve: $out"
[ "$(count w2)" = 0 ] || fail "approved write did not run"

"$bin" --db "$db" --workdir "$w" --thread t3 ask "message alice that the report is ready" >/dev/null
out=$("$bin" --db "$db" --workdir "$w" --thread t3 edit '{"to":"carol","text":"Ready."}')
grep -q "message sent to carol" <<<"$out" || fail "edit: $out"
grep -q "carol	Ready." "$w/messages.log" || fail "edited message not sent"
echo "email_sql_agent: all checks passed"
