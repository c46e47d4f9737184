#!/usr/bin/env bash
# Instructions per HTTP HITL cycle: `tollgate serve` (the `bench` agent of tollgate.json, SQLite)
# under callgrind, driven by tollgate_httpload. Warm-up cycles, counters zeroed, N cycles at
# concurrency C, dumped; prints the instructions of every thread of the server divided by N and
# leaves the profile (callgrind_annotate it) in DIR. Independent of the machine's load.
#
#   bench/http/callgrind_http.sh [--build DIR] [--serve BIN] [--n N] [--warmup W] [--concurrency C]
#                                [--out DIR]
#
# --serve profiles another `tollgate` executable (an older build, for a before/after) with the
# load generator of DIR.
# Use a RelWithDebInfo tree (scripts/build.sh; `cmake --build build --target tollgate_cli
# tollgate_httpload`) so that the profile has symbols.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
build="$repo/build"
serve=""
n=200
warmup=30
concurrency=1
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$2"; shift ;;
    --serve) serve="$2"; shift ;;
    --n) n="$2"; shift ;;
    --warmup) warmup="$2"; shift ;;
    --concurrency) concurrency="$2"; shift ;;
    --out) out="$2"; shift ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
  shift
done
[ -n "$serve" ] || serve="$build/src/main/tollgate"
[ -n "$out" ] || out="$(mktemp -d /tmp/tollgate-callgrind.XXXXXX)"
mkdir -p "$out/data"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
valgrind --tool=callgrind --callgrind-out-file="$out/callgrind.out.%p" \
  "$serve" serve --port "$port" --db "$out/data/tollgate.db" \
  --workdir "$out/data/demo" --config "$here/tollgate.json" >"$out/serve.log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null' EXIT
for _ in $(seq 1 240); do
  curl -sf "http://127.0.0.1:$port/ok" >/dev/null 2>&1 && break
  sleep 0.5
done
load=(--port "$port" --assistant bench --message "please look up the weather in Paris"
      --expect "final answer" --workload cycles --concurrency "$concurrency" --reps 1 --warmup 0)
"$build/bench/http/tollgate_httpload" "${load[@]}" --n "$warmup" >/dev/null
callgrind_control -z "$pid" >/dev/null
"$build/bench/http/tollgate_httpload" "${load[@]}" --n "$n" >"$out/load.jsonl"
callgrind_control -d "$pid" >/dev/null
sleep 1
profile="$(ls -t "$out"/callgrind.out.* | head -1)"
total="$(sed -n 's/^summary: \([0-9]*\).*/\1/p' "$profile" | head -1)"
[ -n "$total" ] || total="$(sed -n 's/^totals: \([0-9]*\).*/\1/p' "$profile" | head -1)"
echo "{\"cycles\":$n,\"concurrency\":$concurrency,\"instructions\":$total,\"per_cycle\":$((total / n)),\"profile\":\"$profile\"}"
