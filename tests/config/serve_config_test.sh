#!/usr/bin/env bash
# `tollgate serve --config`: without "agents" the demo agents are served (and the deep one's
# subagent write pauses and lands after an approval); two declared agents are
# listed by /assistants/search and a scripted one pauses on its gated tool over HTTP; a config
# with a mistake stops the server before it serves anything, naming the file and the JSON path.
set -euo pipefail
bin="$1"
dir="$(mktemp -d)"
pid=""
cleanup() { if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi; rm -rf "$dir"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$dir/out" ] && cat "$dir/out" "$dir/err" >&2; exit 1; }

mkdir -p "$dir/conf"
cat >"$dir/conf/mail_script.json" <<'JSON'
{"conversations": [{"match": "email", "replies": [
  {"content": "Sending.", "tool_calls": [{"name": "send_email",
    "args": {"to": "bob@example.com", "subject": "Launch", "body": "It is today."}}]},
  "Done: {tool_results}"]}]}
JSON
cat >"$dir/conf/tollgate.json" <<'JSON'
{"db": "state/tollgate.db",
 "agents": {
   "mail": {"model": "scripted", "script_file": "mail_script.json", "tools": ["send_email"],
            "interrupt_on": {"send_email": {"allowed_decisions": ["approve", "reject"],
                                            "description": "Email {to}?"}},
            "description": "Writes email after a review."},
   "weather": {"model": "demo", "tools": ["weather_search"], "description": "Forecasts."}}}
JSON
mkdir -p "$dir/conf/state"

# start_server ARGS...: runs `tollgate serve ARGS --port 0` from $dir and sets $pid and $url.
start_server() {
  (cd "$dir" && exec "$bin" serve "$@" --port 0 >"$dir/out" 2>"$dir/err") &
  pid=$!
  local port=""
  for _ in $(seq 1 200); do
    port=$(sed -n 's/.*listening on http:\/\/[^:]*:\([0-9]*\).*/\1/p' "$dir/out" 2>/dev/null || true)
    [ -n "$port" ] && break
    kill -0 "$pid" 2>/dev/null || fail "server exited"
    sleep 0.1
  done
  [ -n "$port" ] || fail "server did not start"
  url="http://127.0.0.1:$port"
}
stop_server() { kill "$pid"; wait "$pid" || true; pid=""; }
graph_ids() {
  curl -sf -X POST "$url/assistants/search" -H 'content-type: application/json' -d '{"limit": 100}' |
    grep -o '"graph_id":"[a-z_]*"' | sort -u | tr '\n' ' '
}

# Without "agents" the file only sets the server up, and the demo agent is served.
echo '{"db": "plain.db", "workdir": "plain-demo"}' >"$dir/conf/plain.json"
start_server --config conf/plain.json
graph_ids=$(graph_ids)
grep -q '"graph_id":"agent"' <<<"$graph_ids" || fail "demo agent not served without agents"
grep -q '"graph_id":"deep"' <<<"$graph_ids" || fail "demo deep agent not served: $graph_ids"
[ -f "$dir/conf/plain.db" ] || fail "db was not created next to the config file"

# The demo deep agent: a subagent's write pauses the parent run; once approved the file is in
# the demo sandbox.
thread=$(curl -sf -X POST "$url/threads" -H 'content-type: application/json' -d '{}' |
         sed -n 's/.*"thread_id":"\([^"]*\)".*/\1/p')
run=$(curl -sf -X POST "$url/threads/$thread/runs/wait" -H 'content-type: application/json' \
  -d '{"assistant_id": "deep", "input": {"messages": [{"role": "user",
       "content": "ask the general-purpose agent to write hello to /deep-notes.txt"}]}}')
grep -q '"description":"Write /deep-notes.txt (replacing it if it exists)?"' <<<"$run" ||
  fail "deep agent's subagent did not pause: $run"
[ -e "$dir/conf/plain-demo/sandbox/deep-notes.txt" ] && fail "written before the approval"
run=$(curl -sf -X POST "$url/threads/$thread/runs/wait" -H 'content-type: application/json' \
  -d '{"assistant_id": "deep", "command": {"resume": {"decisions": [{"type": "approve"}]}}}')
grep -q 'Done: task returned' <<<"$run" || fail "approved deep run did not finish: $run"
[ "$(cat "$dir/conf/plain-demo/sandbox/deep-notes.txt")" = "hello" ] || fail "the file was not written"
stop_server

# The server runs from another folder: relative paths in the file are the file's folder's.
start_server --config conf/tollgate.json
[ -f "$dir/conf/state/tollgate.db" ] || fail "db was not created next to the config file"

search=$(curl -sf -X POST "$url/assistants/search" -H 'content-type: application/json' -d '{"limit": 100}')
graphs=$(graph_ids)
grep -q '"graph_id":"mail"' <<<"$graphs" || fail "mail not listed: $search"
grep -q '"graph_id":"weather"' <<<"$graphs" || fail "weather not listed: $search"
grep -q '"graph_id":"agent"' <<<"$graphs" && fail "the demo agent is served next to declared agents: $graphs"
grep -q 'Writes email after a review.' <<<"$search" || fail "description missing: $search"

thread=$(curl -sf -X POST "$url/threads" -H 'content-type: application/json' -d '{}' |
         sed -n 's/.*"thread_id":"\([^"]*\)".*/\1/p')
[ -n "$thread" ] || fail "no thread id"
run=$(curl -sf -X POST "$url/threads/$thread/runs/wait" -H 'content-type: application/json' \
  -d '{"assistant_id": "mail", "input": {"messages": [{"role": "user", "content": "email bob"}]}}')
grep -q '"description":"Email bob@example.com?"' <<<"$run" || fail "mail did not pause: $run"
run=$(curl -sf -X POST "$url/threads/$thread/runs/wait" -H 'content-type: application/json' \
  -d '{"assistant_id": "mail", "command": {"resume": {"decisions": [{"type": "approve"}]}}}')
grep -q 'Done: ' <<<"$run" || fail "approved run did not finish: $run"
stop_server

# A mistake: the server exits non-zero, names the file and the path, and never listens.
cat >"$dir/conf/bad.json" <<'JSON'
{"agents": {"mail": {"tools": ["send_email"],
  "interrupt_on": {"send_email": {"when": {"arg": "to", "startswith": "a"}}}}}}
JSON
if "$bin" serve --config "$dir/conf/bad.json" --port 0 --db "$dir/bad.db" >"$dir/out" 2>"$dir/err"; then
  fail "a bad config was served"
fi
grep -q "bad.json: agents.mail.interrupt_on.send_email.when: unknown key 'startswith'" "$dir/err" ||
  fail "unexpected error: $(cat "$dir/err")"
grep -q "listening" "$dir/out" && fail "the bad config was served"
echo "serve --config: all checks passed"
