#!/usr/bin/env bash
# Configures and builds Tollgate. Usage: scripts/build.sh [release|sanitize|fuzz] [extra cmake args]
# Build trees: build/ (release, default), build-sanitize/ (ASan + UBSan) and build-fuzz/ (the
# libFuzzer targets of fuzz/, clang, ASan + UBSan, assertions on).
set -euo pipefail
cd "$(dirname "$0")/.."
flavour="${1:-release}"; shift || true
targets=(); extra_packages=()
case "$flavour" in
  release)  dir=build;          args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo) ;;
  sanitize) dir=build-sanitize; args=(-DCMAKE_BUILD_TYPE=Debug -DTOLLGATE_SANITIZE=ON -DTOLLGATE_BUILD_BENCH=OFF) ;;
  fuzz)     dir=build-fuzz;     args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only"
                                      -DCMAKE_CXX_COMPILER=clang++ -DTOLLGATE_FUZZ=ON -DTOLLGATE_BUILD_TESTS=OFF
                                      -DTOLLGATE_BUILD_BENCH=OFF -DTOLLGATE_BUILD_EXAMPLES=OFF)
            targets=(--target fuzz)
            extra_packages=(clang libclang-rt-14-dev) ;;  # clang and its libFuzzer runtime
  *) echo "unknown build flavour: $flavour (release|sanitize|fuzz)" >&2; exit 2 ;;
esac
scripts/deps.sh "${extra_packages[@]}"
launcher=(); command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# Let clones of the repository in other folders share compiled objects through ccache.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
# Configure every time (cheap): module and test folders are discovered at configure time.
cmake -S . -B "$dir" -G Ninja "${args[@]}" "${launcher[@]}" "$@" >/dev/null
jobs="${TOLLGATE_JOBS:-$(nproc)}"
cmake --build "$dir" -j "$jobs" "${targets[@]}"
