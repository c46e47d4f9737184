#!/usr/bin/env bash
# Runs Tollgate's benchmarks and the LangGraph.js peer's matching workloads in one go and
# prints one table: our figure, the peer's figure and the ratio.
#
#   bench/run.sh            default matrix (~10 min on the shared 2-core machine)
#   bench/run.sh --quick    smaller sizes (~3 min)
#   bench/run.sh --no-peer  ours only (no node/npm needed)
#   bench/run.sh --http     also the HTTP benchmark (bench/http/run_http.sh: tollgate serve vs
#                           the JS Agent Server, ~15 min more; with --quick ~6 min)
#   bench/run.sh --postgres also the PostgreSQL saver (steps, hitl_agent) next to the peer's
#                           PostgresSaver, on a private server (scripts/pg.sh, fsync and
#                           synchronous_commit on, the server's defaults, as the peer's
#                           README runs it); ~3 min more
#
# Environment: TOLLGATE_BENCH_BUILD_DIR (default: build-bench), TOLLGATE_PEERS_DIR (default:
# ../shared/peers next to the repository). Raw JSON lines and the table go to
# bench/results/<UTC timestamp>/ (git-ignored). Benchmarks report; they never fail on a figure
# (a workload that crashes is reported and skipped).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
quick=0
peer=1
http=0
postgres=0
for arg in "$@"; do
  case "$arg" in
    --postgres) postgres=1 ;;
    --quick) quick=1 ;;
    --no-peer) peer=0 ;;
    --http) http=1 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "unknown argument: $arg" >&2; exit 2 ;;
  esac
done

build="${TOLLGATE_BENCH_BUILD_DIR:-$repo/build-bench}"
stamp="$(date -u +%Y-%m-%dT%H-%M-%SZ)"
out="$here/results/$stamp"
mkdir -p "$out"
ours_file="$out/tollgate.jsonl"
peer_file="$out/langgraphjs.jsonl"
: >"$ours_file"
: >"$peer_file"
log() { echo "[run] $*" >&2; }
log "results in $out; load: $(cut -d' ' -f1-3 /proc/loadavg)"

# ------------------------------------------------------------------ build (Release, -O2)
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$repo" -B "$build" -G Ninja "${launcher[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" -DTOLLGATE_BUILD_BENCH=ON \
  -DTOLLGATE_BUILD_TESTS=OFF -DTOLLGATE_BUILD_EXAMPLES=OFF >/dev/null || exit 1
cmake --build "$build" --target tollgate_bench -j2 >&2 || { log "build failed"; exit 1; }
bench_bin="$build/bench/tollgate_bench"
datadir="$out/data"

ours() {
  log "tollgate_bench $*"
  "$bench_bin" --datadir "$datadir" "$@" >>"$ours_file" || log "FAILED: tollgate_bench $*"
}

# ------------------------------------------------------------------ PostgreSQL (--postgres)
pg_url=""
if [ "$postgres" = 1 ]; then
  pg_dir="$(mktemp -u "${TMPDIR:-/tmp}/tollgate-bench-pg.XXXXXX")"
  trap '"$repo/scripts/pg.sh" stop "$pg_dir"' EXIT
  if pg_url="$(TOLLGATE_PG_FSYNC=on "$repo/scripts/pg.sh" start "$pg_dir")"; then
    log "PostgreSQL at $pg_url"
  else
    log "PostgreSQL did not start: no postgres rows"
    pg_url=""
  fi
fi

# ------------------------------------------------------------------ our workloads
if [ "$quick" = 1 ]; then
  ours --workload chain --saver none --n 5000 --reps 5
  for s in none memory; do ours --workload steps --saver "$s" --n 1000; done
  ours --workload steps --saver sqlite --n 500
  ours --workload hitl_cycle --saver memory --n 500 --reps 3
  ours --workload hitl_cycle --saver sqlite --n 200 --reps 3
  ours --workload fanout --saver memory --n 1 --cycles 300 --reps 3
  ours --workload fanout --saver sqlite --n 1 --cycles 100 --reps 3
  ours --workload long_thread --saver memory --sizes 10,100,1000 --budget 60
  ours --workload long_thread --saver sqlite --sizes 10,100,1000 --budget 60
else
  ours --workload chain --saver none --n 20000 --reps 7
  for s in none memory; do ours --workload steps --saver "$s" --n 3000 --reps 5; done
  ours --workload steps --saver sqlite --n 1500 --reps 5
  ours --workload hitl_cycle --saver memory --n 2000 --reps 5
  ours --workload hitl_cycle --saver sqlite --n 500 --reps 5
  ours --workload fanout --saver memory --n 1 --reps 5
  ours --workload fanout --saver sqlite --n 1 --reps 5
  ours --workload fanout --saver memory --n 10 --reps 5
  ours --workload fanout --saver sqlite --n 10 --reps 5
  ours --workload long_thread --saver memory --sizes 10,100,500,1000,10000 --budget 90
  ours --workload long_thread --saver sqlite --sizes 10,100,500,1000,10000 --budget 90
fi
# Agent-level W2: create_agent + HumanInTheLoop (peer: --workload hitl_cycle), on fresh
# threads and on one thread after 1, 100, 1,000 prior cycles.
if [ "$quick" = 1 ]; then
  ours --workload hitl_agent --saver memory --n 300 --reps 3
  ours --workload hitl_agent --saver sqlite --n 100 --reps 3
  ours --workload hitl_agent_thread --saver memory --sizes 1,100 --window 25
else
  ours --workload hitl_agent --saver memory --n 1000 --reps 5
  ours --workload hitl_agent --saver sqlite --n 300 --reps 5
  for s in memory sqlite; do
    ours --workload hitl_agent_thread --saver "$s" --sizes 1,100,1000 --window 50
  done
fi

if [ -n "$pg_url" ]; then
  if [ "$quick" = 1 ]; then
    ours --workload steps --saver postgres --pg-url "$pg_url" --n 300 --reps 3
    ours --workload hitl_agent --saver postgres --pg-url "$pg_url" --n 100 --reps 3
  else
    ours --workload steps --saver postgres --pg-url "$pg_url" --n 1000 --reps 5
    ours --workload hitl_agent --saver postgres --pg-url "$pg_url" --n 300 --reps 5
  fi
fi

# ------------------------------------------------------------------ the peer (LangGraph.js)
peer_dir="$here/.peers/langgraphjs"
if [ "$peer" = 1 ]; then
  if "$here/peer/setup_langgraphjs.sh"; then
    peer_run() {
      log "node bench.mjs $*"
      (cd "$peer_dir" && node bench.mjs --datadir "$datadir" "$@") >>"$peer_file" ||
        log "FAILED: node bench.mjs $*"
    }
    if [ "$quick" = 1 ]; then
      for s in none memory; do peer_run --workload steps --saver "$s" --n 500; done
      peer_run --workload steps --saver sqlite --n 300
      peer_run --workload fanout --saver memory --n 1 --cycles 40
      peer_run --workload fanout --saver sqlite --n 1 --cycles 30
      peer_run --workload long_thread --saver memory --n 100
      peer_run --workload long_thread --saver sqlite --n 100
    else
      # Its per-step cost does not depend on N (RESULTS.md), so N is kept small to save time.
      for s in none memory; do peer_run --workload steps --saver "$s" --n 1000; done
      peer_run --workload steps --saver sqlite --n 500
      peer_run --workload steps --saver memory --n 1000 --durability sync
      peer_run --workload steps --saver sqlite --n 500 --durability sync
      peer_run --workload fanout --saver memory --n 1 --cycles 200
      peer_run --workload fanout --saver sqlite --n 1 --cycles 100
      peer_run --workload fanout --saver memory --n 10 --cycles 100
      peer_run --workload fanout --saver sqlite --n 10 --cycles 50
      # The peer's per-turn cost grows with the thread: keep it at <= 500 messages here.
      peer_run --workload long_thread --saver memory --n 500
      peer_run --workload long_thread --saver sqlite --n 500
    fi
    # Agent-level W2: createAgent + humanInTheLoopMiddleware, approve.
    if [ "$quick" = 1 ]; then
      peer_run --workload hitl_cycle --saver memory --n 30
    else
      peer_run --workload hitl_cycle --saver memory --n 200
      peer_run --workload hitl_cycle --saver sqlite --n 100
    fi
    if [ -n "$pg_url" ]; then
      peer_run --workload steps --saver postgres --pg "$pg_url" --n 300
      peer_run --workload hitl_cycle --saver postgres --pg "$pg_url" --n "$([ "$quick" = 1 ] && echo 30 || echo 100)"
    fi
  else
    log "peer unavailable: reporting our figures only"
  fi
fi

rm -rf "$datadir"
echo
echo "## Tollgate vs LangGraph.js — $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
python3 "$here/report.py" "$out"

# ------------------------------------------------------------------ HTTP (bench/http)
if [ "$http" = 1 ]; then
  http_args=(--out "$out")
  [ "$quick" = 1 ] && http_args+=(--quick)
  [ "$peer" = 0 ] && http_args+=(--no-peer)
  TOLLGATE_BENCH_BUILD_DIR="$build" "$here/http/run_http.sh" "${http_args[@]}"
fi
