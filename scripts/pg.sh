#!/usr/bin/env bash
# A private PostgreSQL 15 server for the tests and benchmarks: a fresh cluster in a temporary
# folder, listening on 127.0.0.1 on a free port (unix sockets in the folder, no system service).
#
#   scripts/pg.sh run CMD [ARG...]   start a server, run CMD with TOLLGATE_TEST_PG_URL set to
#                                    its URL, stop the server (also when CMD fails or is
#                                    interrupted); exits with CMD's status
#   scripts/pg.sh start DIR          start a server with its cluster in DIR (created; must not
#                                    exist); prints the URL, also written to DIR/url
#   scripts/pg.sh stop DIR           stop the server started in DIR and remove DIR
#
# The URL is postgres://tollgate@127.0.0.1:PORT/tollgate (trust authentication on loopback).
# Environment:
#   TOLLGATE_PG_FSYNC=off|on   fsync and full_page_writes (default off: the tests need no
#                              durability against power loss; bench/run.sh passes on, the
#                              server's own default). synchronous_commit keeps its default (on)
#   TOLLGATE_PG_USER=NAME      the unprivileged user running the server when this script runs
#                              as root (initdb refuses root); default tollgate-pg, created when
#                              missing (nobody when it cannot be)
#   TOLLGATE_PG_BIN=DIR        the PostgreSQL binaries (default /usr/lib/postgresql/15/bin)
set -euo pipefail

bin="${TOLLGATE_PG_BIN:-/usr/lib/postgresql/15/bin}"
fsync="${TOLLGATE_PG_FSYNC:-off}"

die() { echo "pg.sh: $*" >&2; exit 1; }

[ -x "$bin/initdb" ] || die "no PostgreSQL binaries in $bin (scripts/deps.sh installs postgresql-15)"
case "$fsync" in on|off) ;; *) die "TOLLGATE_PG_FSYNC must be on or off, not '$fsync'" ;; esac

# The user the server runs as; prints it (empty: this user).
server_user() {
  [ "$(id -u)" -ne 0 ] && return 0
  local user="${TOLLGATE_PG_USER:-tollgate-pg}"
  if ! id -u "$user" >/dev/null 2>&1; then
    if [ -z "${TOLLGATE_PG_USER:-}" ] &&
        useradd --system --no-create-home --shell /usr/sbin/nologin "$user" >/dev/null 2>&1; then
      :
    else
      [ -n "${TOLLGATE_PG_USER:-}" ] && die "user $user does not exist"
      user=nobody
    fi
  fi
  echo "$user"
}

as_server() {  # as_server CMD...: runs CMD as the server's user
  if [ -n "$user" ]; then runuser -u "$user" -- "$@"; else "$@"; fi
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null ||
    echo $((20000 + RANDOM % 40000))
}

start() {  # start DIR
  local dir="$1" port attempt
  [ -e "$dir" ] && die "$dir exists"
  user="$(server_user)"
  mkdir -p "$dir"
  chmod 700 "$dir"
  [ -n "$user" ] && chown "$user" "$dir"
  as_server "$bin/initdb" -D "$dir/data" -U tollgate --auth=trust -E UTF8 --no-locale \
    --no-sync >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; die "initdb failed"; }
  for attempt in 1 2 3 4 5; do
    port="$(free_port)"
    if as_server "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=$fsync \
            -c full_page_writes=$fsync -c max_connections=200" \
        start >"$dir/pg_ctl.log" 2>&1; then
      as_server "$bin/createdb" -h "$dir" -p "$port" -U tollgate tollgate
      echo "postgres://tollgate@127.0.0.1:$port/tollgate" >"$dir/url"
      [ -n "$user" ] && chown "$user" "$dir/url"
      cat "$dir/url"
      return 0
    fi
    echo "pg.sh: port $port: start failed (attempt $attempt)" >&2
  done
  tail -20 "$dir/server.log" >&2 || true
  die "the server did not start"
}

stop() {  # stop DIR
  local dir="$1"
  [ -d "$dir" ] || return 0
  user="$(stat -c %U "$dir")"
  [ "$(id -u)" -ne 0 ] && user=""
  if [ -f "$dir/data/postmaster.pid" ]; then
    as_server "$bin/pg_ctl" -D "$dir/data" -m fast -w -t 60 stop >/dev/null 2>&1 ||
      kill -INT "$(head -1 "$dir/data/postmaster.pid")" 2>/dev/null || true
  fi
  rm -rf "$dir"
}

case "${1:-}" in
  start) [ $# -eq 2 ] || die "usage: pg.sh start DIR"; start "$2" ;;
  stop)  [ $# -eq 2 ] || die "usage: pg.sh stop DIR"; stop "$2" ;;
  run)
    shift
    [ $# -ge 1 ] || die "usage: pg.sh run CMD [ARG...]"
    dir="$(mktemp -d "${TMPDIR:-/tmp}/tollgate-pg.XXXXXX")"
    rmdir "$dir"
    trap 'stop "$dir"' EXIT
    trap 'exit 130' INT TERM
    TOLLGATE_TEST_PG_URL="$(start "$dir")"
    export TOLLGATE_TEST_PG_URL
    echo "pg.sh: PostgreSQL at $TOLLGATE_TEST_PG_URL (fsync=$fsync)" >&2
    status=0
    "$@" || status=$?
    exit "$status"
    ;;
  *) die "usage: pg.sh run CMD [ARG...] | start DIR | stop DIR" ;;
esac
