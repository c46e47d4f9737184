#!/usr/bin/env bash
# The HTTP benchmark: human-in-the-loop cycles through `tollgate serve` and through the JS
# reference Agent Server (shared/peers/agent-server, with bench/http/agent_graph.ts as its
# "agent"), driven by the same load generator (tollgate_httpload), then one table with ratios.
#
#   bench/http/run_http.sh [--quick] [--no-peer] [--no-build] [--out DIR] [--pause N]
#                          [--peer-pause N] [--postgres] [--replicas N] [--no-sqlite]
#
# Measures, per server: cycles/s and cycle/resume latency at concurrency 1 and 8 (one cycle =
# create thread -> runs/wait to the interrupt -> runs/wait with the approve resume), the
# server's CPU per cycle (from /proc), the client's CPU per cycle, and the server's RSS growth
# per paused thread after pausing N threads on a fresh server (ours: 10,000; the peer: fewer,
# it pauses a few threads per second). Environment: TOLLGATE_BENCH_BUILD_DIR (default
# build-bench), TOLLGATE_PEERS_DIR. Raw JSON lines go to DIR/http.jsonl. Reports; never fails
# on a figure.
#
# --postgres: also `tollgate serve` on a private PostgreSQL (scripts/pg.sh, fsync on), one
# replica; --replicas N (N > 1, implies --postgres): also N replicas on one database, each
# client sending the calls of a cycle to the replicas in turn. Each configuration gets a fresh
# server. The PostgreSQL rows add the database's work per cycle (commits, WAL flushes, the
# CPU of all its processes; bench/http/pg_counters.py). No pause/RSS workload on PostgreSQL
# (its cycles are bound by the disk's flushes: filling 10,000 threads would take many
# minutes). --no-sqlite skips the SQLite rows.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
quick=0
peer=1
build_it=1
out=""
pause_n=10000
peer_pause_n=1000
postgres=0
replicas=1
sqlite=1
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --no-peer) peer=0 ;;
    --no-build) build_it=0 ;;
    --out) out="$2"; shift ;;
    --pause) pause_n="$2"; shift ;;
    --peer-pause) peer_pause_n="$2"; shift ;;
    --postgres) postgres=1 ;;
    --replicas) replicas="$2"; shift ;;
    --no-sqlite) sqlite=0 ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
  shift
done
case "$replicas" in ''|*[!0-9]*|0) echo "--replicas: a positive integer, not '$replicas'" >&2; exit 2 ;; esac
[ "$replicas" -gt 1 ] && postgres=1
[ -n "$out" ] || out="$repo/bench/results/$(date -u +%Y-%m-%dT%H-%M-%SZ)-http"
mkdir -p "$out"
jsonl="$out/http.jsonl"
: >"$jsonl"
log() { echo "[http] $*" >&2; }
log "results in $out; load: $(cut -d' ' -f1-3 /proc/loadavg)"

# ------------------------------------------------------------------ build (Release, -O2)
# --no-build: use the binaries already in the build directory (any Release build of them).
build="${TOLLGATE_BENCH_BUILD_DIR:-$repo/build-bench}"
if [ "$build_it" = 1 ]; then
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S "$repo" -B "$build" -G Ninja "${launcher[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" -DTOLLGATE_BUILD_BENCH=ON \
    -DTOLLGATE_BUILD_TESTS=OFF -DTOLLGATE_BUILD_EXAMPLES=OFF >/dev/null || exit 1
  cmake --build "$build" --target tollgate_cli tollgate_httpload -j2 >&2 || { log "build failed"; exit 1; }
fi
load_bin="$build/bench/http/tollgate_httpload"
tollgate_bin="$build/src/main/tollgate"

if [ "$quick" = 1 ]; then
  ours_n=300; ours_n8=600; peer_n=10; peer_n8=24; reps=3
  pg_n=60; pg_n8=160
  [ "$pause_n" = 10000 ] && pause_n=2000
  [ "$peer_pause_n" = 1000 ] && peer_pause_n=200
else
  ours_n=1000; ours_n8=2000; peer_n=20; peer_n8=64; reps=3
  pg_n=200; pg_n8=400
fi

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
wait_http() {  # port
  for _ in $(seq 1 240); do
    curl -sf "http://127.0.0.1:$1/ok" >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  return 1
}
load() {  # label ports pids assistant message expect -- extra loadgen args (ports, pids: comma lists)
  local label="$1" ports="$2" pids="$3" assistant="$4" message="$5" expect="$6"
  shift 7
  log "$label: tollgate_httpload --ports $ports $*"
  # In the background, so that a signal ends the run at once (bash runs traps only between
  # foreground commands, but during `wait`).
  "$load_bin" --server "$label" --ports "$ports" --pid "$pids" --assistant "$assistant" \
    --message "$message" --expect "$expect" "$@" >>"$jsonl" &
  load_pid=$!
  wait "$load_pid" || log "FAILED: $label $*"
  load_pid=""
}
load_pid=""

# ------------------------------------------------------------------ ours: tollgate serve
# The agent: bench/http/tollgate.json (create_agent + HumanInTheLoop middleware, a scripted
# model that proposes one gated tool call and then answers), the same shape as the peer's.
ours_assistant="bench"
ours_message="please look up the weather in Paris"
ours_expect="final answer"
ours_pids=()
ours_ports=()
joined() { local IFS=,; echo "$*"; }
start_one() {  # db log-name [extra serve args]: starts one `tollgate serve`, appends its port and pid
  local db="$1" name="$2" port
  shift 2
  port="$(free_port)"
  "$tollgate_bin" serve --port "$port" --db "$db" --workdir "$out/$name-demo" \
    --config "$here/tollgate.json" "$@" >"$out/$name.log" 2>&1 &
  ours_pids+=("$!")
  ours_ports+=("$port")
}
start_ours() {  # sqlite | postgres URL N
  local port
  ours_pids=(); ours_ports=()
  if [ "$1" = sqlite ]; then
    local data="$out/tollgate-data"
    rm -rf "$data" && mkdir -p "$data"
    start_one "$data/tollgate.db" tollgate-serve
  else
    local i
    for i in $(seq 1 "$3"); do start_one "$2" "tollgate-serve-pg$3-r$i" --replica-id "bench-r$i"; done
  fi
  for port in "${ours_ports[@]}"; do
    wait_http "$port" || { log "tollgate serve did not start (see $out/tollgate-serve*.log)"; return 1; }
  done
  if ! curl -s -X POST "http://127.0.0.1:${ours_ports[0]}/assistants/search" \
      -H 'content-type: application/json' -d '{"graph_id":"bench"}' | grep -q '"graph_id":"bench"'; then
    # A build without config-file agents: the demo agent's gated send_email (writes to its
    # SQLite outbox, so a cycle does a little more work than the peer's).
    log "no config-file agents in this build: using the demo agent's send_email"
    ours_assistant="agent"
    ours_message="email bob@example.com about the launch"
    ours_expect="Done"
  fi
}
stop_ours() {
  local pid
  for pid in "${ours_pids[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${ours_pids[@]}"; do wait "$pid" 2>/dev/null; done
  ours_pids=(); ours_ports=()
}
ours() {  # label -- loadgen args
  local label="$1"
  shift
  load "$label" "$(joined "${ours_ports[@]}")" "$(joined "${ours_pids[@]}")" "$ours_assistant" \
    "$ours_message" "$ours_expect" "$@"
}

# A private PostgreSQL per configuration (a fresh database and fresh statistics each time).
pg_dir=""
pg_url=""
start_pg() {
  pg_dir="$(mktemp -u "${TMPDIR:-/tmp}/tollgate-http-pg.XXXXXX")"
  pg_url="$(TOLLGATE_PG_FSYNC=on "$repo/scripts/pg.sh" start "$pg_dir")" || {
    log "PostgreSQL did not start"; pg_dir=""; return 1; }
  log "PostgreSQL at $pg_url"
  # Keep the WAL of a whole measurement for pg_waldump's count of commit records.
  "${TOLLGATE_PG_BIN:-/usr/lib/postgresql/15/bin}/psql" "$pg_url" -XAtqc \
    "alter system set wal_keep_size = '2GB'" -c "select pg_reload_conf()" >/dev/null
}
stop_pg() {
  [ -n "$pg_dir" ] && "$repo/scripts/pg.sh" stop "$pg_dir"
  pg_dir=""
}
# ours_pg LABEL CYCLES -- loadgen args: one measurement plus the database's work per cycle
# (CYCLES: every cycle the load generator drives, warm-up included).
ours_pg() {
  local label="$1" cycles="$2" postmaster
  shift 3
  postmaster="$(head -1 "$pg_dir/data/postmaster.pid")"
  python3 "$here/pg_counters.py" snapshot "$pg_url" "$postmaster" >"$out/pg-before.json" || return
  ours "$label" -- "$@"
  python3 "$here/pg_counters.py" snapshot "$pg_url" "$postmaster" >"$out/pg-after.json" || return
  python3 "$here/pg_counters.py" per-cycle "$out/pg-before.json" "$out/pg-after.json" "$cycles" \
    "$label" "${#ours_pids[@]}" "$(concurrency_of "$@")" "$pg_dir/data/pg_wal" >>"$jsonl"
}
concurrency_of() { while [ $# -gt 0 ]; do [ "$1" = --concurrency ] && { echo "$2"; return; }; shift; done; echo 1; }

cleanup() {  # everything this script started: the load generator, our servers, PostgreSQL, the peer
  [ -n "$load_pid" ] && kill "$load_pid" 2>/dev/null
  stop_ours
  stop_pg
  declare -F stop_peer >/dev/null && stop_peer
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ "$sqlite" = 1 ] && start_ours sqlite; then
  ours tollgate -- --workload cycles --concurrency 1 --n "$ours_n" --warmup 100 --reps "$reps"
  ours tollgate -- --workload cycles --concurrency 8 --n "$ours_n8" --warmup 100 --reps "$reps"
  stop_ours
  if start_ours sqlite; then
    ours tollgate -- --workload pause --concurrency 8 --n "$pause_n" --warmup 50
  fi
  stop_ours
fi
if [ "$postgres" = 1 ]; then
  counts=1
  [ "$replicas" -gt 1 ] && counts="1 $replicas"
  for count in $counts; do
    if start_pg && start_ours postgres "$pg_url" "$count"; then
      ours_pg tollgate-pg $((20 + pg_n * reps)) -- --workload cycles --concurrency 1 --n "$pg_n" \
        --warmup 20 --reps "$reps"
      ours_pg tollgate-pg $((40 + pg_n8 * reps)) -- --workload cycles --concurrency 8 \
        --n "$pg_n8" --warmup 40 --reps "$reps"
    fi
    stop_ours
    stop_pg
  done
fi

# ------------------------------------------------------------------ the peer: JS Agent Server
peer_dir="$repo/bench/.peers/agent-server"
peer_pid=""
peer_listener=""
start_peer() {
  peer_port="$(free_port)"
  (cd "$peer_dir" && WORKDIR="$out/agent-server" PORT="$peer_port" ./start.sh >/dev/null 2>&1)
  peer_pid="$(cat "$out/agent-server/server.pid" 2>/dev/null)"
  wait_http "$peer_port" || { log "the JS agent server did not start"; return 1; }
  # langgraphjs dev runs the server in a child process: measure the one that listens.
  peer_listener="$(ss -ltnpH "sport = :$peer_port" | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -1)"
  [ -n "$peer_listener" ] || peer_listener="$peer_pid"
}
stop_peer() {
  if [ -n "$peer_pid" ]; then
    [ -n "$peer_listener" ] && kill "$peer_listener" 2>/dev/null
    kill "$peer_pid" 2>/dev/null
  fi
  peer_pid=""
  peer_listener=""
}
if [ "$peer" = 1 ] && "$here/setup_agent_server.sh"; then
  if start_peer; then
    peer() { load agent-server "$peer_port" "$peer_listener" agent "$ours_message" "final answer" -- "$@"; }
    peer --workload cycles --concurrency 1 --n "$peer_n" --warmup 5 --reps "$reps"
    peer --workload cycles --concurrency 8 --n "$peer_n8" --warmup 8 --reps "$reps"
    stop_peer
    sleep 1
    if start_peer; then
      peer --workload pause --concurrency 8 --n "$peer_pause_n" --warmup 8 --settle 5
    fi
    stop_peer
  fi
elif [ "$peer" = 1 ]; then
  log "peer unavailable: reporting our figures only"
fi

echo
echo "## HTTP HITL cycles: tollgate serve vs the JS Agent Server — $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
python3 "$here/report_http.py" "$jsonl" | tee "$out/http-table.md"
