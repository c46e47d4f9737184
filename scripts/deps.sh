#!/usr/bin/env bash
# Installs the Debian packages Tollgate builds and tests with. Idempotent and quiet when
# everything is already present. Usage: scripts/deps.sh [extra-package ...]
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config git
  nlohmann-json3-dev libsqlite3-dev libboost-dev libxxhash-dev libcurl4-openssl-dev
  libfmt-dev libspdlog-dev libcli11-dev libssl-dev
  libgtest-dev libgmock-dev libbenchmark-dev json-schema-test-suite ccache libre2-dev
  libpcre2-dev  # JSON Schema patterns RE2 refuses (lookaround), under step limits
  libjemalloc-dev  # the executables' heap (src/main/jemalloc_config.cpp)
  curl  # tests/config/serve_config_test.sh talks HTTP to `tollgate serve`
  sqlite3  # tests/integration/audit.test.mjs edits an audit row behind the server's back
  libpq-dev postgresql-15  # the PostgreSQL saver; scripts/pg.sh starts a private server for its tests
  "$@"
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "Installing missing Debian packages: ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
