#!/usr/bin/env bash
# Configures and builds Tollgate. Usage: scripts/build.sh [release|sanitize] [extra cmake args]
# Build trees: build/ (release, default) and build-sanitize/ (ASan + UBSan).
set -euo pipefail
cd "$(dirname "$0")/.."
flavour="${1:-release}"; shift || true
case "$flavour" in
  release)  dir=build;          args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo) ;;
  sanitize) dir=build-sanitize; args=(-DCMAKE_BUILD_TYPE=Debug -DTOLLGATE_SANITIZE=ON -DTOLLGATE_BUILD_BENCH=OFF) ;;
  *) echo "unknown build flavour: $flavour (release|sanitize)" >&2; exit 2 ;;
esac
scripts/deps.sh
launcher=(); command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# Let clones of the repository in other folders share compiled objects through ccache.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
# Configure every time (cheap): module and test folders are discovered at configure time.
cmake -S . -B "$dir" -G Ninja "${args[@]}" "${launcher[@]}" "$@" >/dev/null
jobs="${TOLLGATE_JOBS:-$(nproc)}"
cmake --build "$dir" -j "$jobs"
