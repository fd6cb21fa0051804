#!/usr/bin/env bash
# Installs a built Tessera tree into a temporary prefix, then builds and runs the
# outside consumer project (tests/consumer) against it with find_package, and runs the
# installed `tessera` command: proves the package config, headers and RPATHs work.
# The consumer is a Release build, as a user's would be, by COMPILER (g++ or clang++;
# default: CMake's choice); a COMPILER that is not installed skips the test (exit 77).
#
#   tests/consumer/run.sh BUILD_DIR [COMPILER]
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: $0 BUILD_DIR [COMPILER]" >&2
  exit 2
fi
build_dir=$(cd "$1" && pwd)
compiler=()
expected_id=""
if [ $# -eq 2 ]; then
  if ! command -v "$2" > /dev/null; then
    echo "consumer: $2 is not installed; skipped (scripts/setup installs it)" >&2
    exit 77
  fi
  compiler=(-DCMAKE_CXX_COMPILER="$2")
  case "$2" in
    *clang++*) expected_id=Clang ;;
    *g++*) expected_id=GNU ;;
  esac
fi
source_dir=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/tessera-consumer.XXXXXX")
trap 'rm -rf "$work"' EXIT

prefix="$work/prefix"
cmake --install "$build_dir" --prefix "$prefix" > "$work/install.log" \
  || { cat "$work/install.log" >&2; exit 1; }

# The engine's own headers are not installed, and no installed header names one (the
# consumer's build below proves the installed headers compile without them).
if [ -n "$(find "$prefix/include" -path '*/internal*' -print -quit)" ]; then
  echo "consumer: engine-internal headers were installed:" >&2
  find "$prefix/include" -path '*/internal*' >&2
  exit 1
fi
if grep -rn '#include "tessera/.*/internal/' "$prefix/include" >&2; then
  echo "consumer: an installed header includes an engine-internal one (above)" >&2
  exit 1
fi

generator=()
command -v ninja > /dev/null && generator=(-G Ninja)
cmake -S "$source_dir" -B "$work/build" "${generator[@]}" "${compiler[@]}" \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release > "$work/configure.log" \
  || { cat "$work/configure.log" >&2; exit 1; }
# The consumer's CMakeLists prints the compiler and build type it got.
grep 'tessera_consumer: ' "$work/configure.log"
if ! grep -q "tessera_consumer: built by ${expected_id:-.*} .* as Release$" "$work/configure.log"; then
  echo "consumer: expected a ${expected_id:-any-compiler} Release build" >&2
  exit 1
fi
cmake --build "$work/build" > "$work/build.log" || { cat "$work/build.log" >&2; exit 1; }

# The consumer runs without LD_LIBRARY_PATH: its RPATH must find libtessera.
env -u LD_LIBRARY_PATH "$work/build/tessera_consumer" "$work/consumer.zarr"

# The installed command must find the installed library through its $ORIGIN-relative
# RPATH, not the build tree's.
tessera="$prefix/bin/tessera"
version=$(env -u LD_LIBRARY_PATH "$tessera" --version)
[ "$version" = "tessera 0.1.0" ] || { echo "unexpected version: $version" >&2; exit 1; }
if command -v ldd > /dev/null; then
  resolved=$(env -u LD_LIBRARY_PATH ldd "$tessera" | awk '/libtessera/ {print $3}')
  case "$resolved" in
    "$prefix"/*) ;;
    *) echo "installed tessera resolves libtessera to '$resolved', not into $prefix" >&2
       exit 1 ;;
  esac
fi
info=$(env -u LD_LIBRARY_PATH "$tessera" info "$work/consumer.zarr" --json)
case "$info" in
  *'"chunks_stored": 9'*) ;;
  *) echo "unexpected tessera info output: $info" >&2; exit 1 ;;
esac
echo "consumer_find_package${2:+ ($2)}: OK"
