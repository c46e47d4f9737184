#!/usr/bin/env bash
# find_package_test.sh BUILD_DIR SOURCE_DIR CXX: installs BUILD_DIR into a temporary prefix,
# builds tests/package/consumer (find_package(tollgate) and the weather_review example) against
# it and runs the example's own end-to-end check on the result.
set -euo pipefail
build="$1"; src="$2"; cxx="$3"
dir="$(mktemp -d)"; trap 'rm -rf "$dir"' EXIT
cmake --install "$build" --prefix "$dir/prefix" >/dev/null
launcher=(); command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$src/tests/package/consumer" -B "$dir/consumer" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER="$cxx" "${launcher[@]}" -DCMAKE_PREFIX_PATH="$dir/prefix" \
  -DEXAMPLE_SOURCE="$src/examples/weather_review.cpp" >"$dir/configure.log" 2>&1 \
  || { cat "$dir/configure.log" >&2; exit 1; }
cmake --build "$dir/consumer" >"$dir/build.log" 2>&1 || { tail -40 "$dir/build.log" >&2; exit 1; }
"$src/examples/weather_review_test.sh" "$dir/consumer/weather_review"
