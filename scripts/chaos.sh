#!/usr/bin/env bash
# The chaos run (docs/chaos.md; not part of any test tier): `tollgate serve` with the demo agent
# on a fresh SQLite database, driven by concurrent @langchain/langgraph-sdk clients while the
# server is killed with kill -9 and restarted on the same database, and its disk is filled for a
# few seconds at a time; then the invariants are checked. Exit status 1 when one fails.
#   scripts/chaos.sh [--clients N] [--kills N] [--seconds S] [--disk-full N] [--disk-full-ms M]
#                    [--tmpfs-size SIZE] [--out FILE] [--keep]
# Defaults: 8 clients, 20 kills over 120 s, 3 disk-full windows of 3 s on a 4g tmpfs.
# --keep leaves the run's folder (db-copy/ the database, demo/ the outbox, server.log) and prints it;
# a run whose invariants fail leaves it too.
# The disk-full part needs `mount -t tmpfs` (root); without it that part is skipped, said so.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
tmpfs_size=4g
keep=0
pass=()
while [ $# -gt 0 ]; do
  case "$1" in
    --tmpfs-size) tmpfs_size="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    --out) pass+=(--out "$(realpath -m "$2")"); shift 2 ;;
    --clients|--kills|--seconds|--disk-full|--disk-full-ms) pass+=("$1" "$2"); shift 2 ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "chaos: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

log="$(mktemp)"
echo "chaos: building tollgate (release)..."
jobs="${TOLLGATE_JOBS:-$(nproc)}"
if [ -f build/build.ninja ]; then
  build=(nice cmake --build build -j "$jobs" --target tollgate_cli)  # only what the run needs
else
  build=(env TOLLGATE_JOBS="$jobs" nice scripts/build.sh release)
fi
if ! "${build[@]}" >"$log" 2>&1; then
  cat "$log" >&2; rm -f "$log"
  echo "chaos: the build failed (output above)" >&2
  exit 1
fi
rm -f "$log"
binary="$root/build/src/main/tollgate"
(cd tests/integration
 if [ ! -d node_modules/@langchain/langgraph-sdk ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
   npm ci --no-audit --no-fund --loglevel=error
 fi)

run_dir="$(mktemp -d "${TMPDIR:-/tmp}/tollgate-chaos-XXXXXX")"
db_dir="$run_dir/db"
mkdir -p "$db_dir"
mounted=0
cleanup() {
  if [ "$keep" = 1 ] && [ "$mounted" = 1 ]; then
    mkdir -p "$run_dir/db-copy" && cp -a "$db_dir"/tollgate.db* "$run_dir/db-copy/" 2>/dev/null || true
  fi
  if [ "$mounted" = 1 ]; then umount "$db_dir" 2>/dev/null || umount -l "$db_dir" || true; fi
  if [ "$keep" = 1 ]; then
    echo "chaos: the run's folder is kept: $run_dir ($(du -sh "$run_dir" 2>/dev/null | cut -f1))"
  else
    rm -rf "$run_dir"
  fi
}
trap cleanup EXIT
if mount -t tmpfs -o "size=$tmpfs_size" tollgate-chaos "$db_dir" 2>/dev/null; then
  mounted=1
  pass+=(--tmpfs)
  echo "chaos: the database is on a $tmpfs_size tmpfs at $db_dir"
else
  echo "chaos: cannot mount a tmpfs here (mount -t tmpfs needs root): the disk-full windows are SKIPPED" >&2
fi
# The run uses its own copy of the binary: a rebuild of build/ during the run cannot then take the
# file from under the restarts.
cp "$binary" "$run_dir/tollgate"
status=0
TOLLGATE_BIN="$run_dir/tollgate" nice node tests/chaos/driver.mjs --db-dir "$db_dir" "${pass[@]}" || status=$?
if [ "$status" != 0 ] && [ "$keep" = 0 ]; then
  # A failed run (an invariant, or the driver itself) is worth its evidence: the folder (the
  # database copied off the tmpfs, the server's log, the outbox) is kept as with --keep. Remove
  # it when done: it can take GBs.
  keep=1
  echo "chaos: the run failed: its folder is kept (remove it when done)"
fi
exit "$status"
