#!/usr/bin/env bash
# Checks DESIGN.md's rule that dependencies point down only, over every C++ file of the
# repository. Layers, bottom to top:
#   core < storage/codecs < storage/stores < storage/sharding < storage/zarr < memory < plan < exec < api
#   < front ends (src/cli/, tests/interop/, tests/consumer/, python/)
# - A file of a layer (its public headers, its sources and its tests) includes headers of
#   its layer and below only. The compiler enforces this too (cmake/TesseraLayers.cmake);
#   this check also runs without a build and names every offending line.
# - tests/support/ headers take the layer of what they include (task_bounds.hpp: exec);
#   a test may include those of its layer and below.
# - Front ends include only api/ (tessera.hpp, tessera/api/*), core's value types, the
#   plan's public face (its headers outside plan/internal/: finalized_plan.hpp,
#   op_info.hpp, plan_options.hpp, ...), exec/execution_report.hpp and
#   exec/remote_tasks.hpp (the remote executors' launchers). Headers under
#   .../internal/ are the engine's and are not installed.
# - src/exec/mpi/*_mpitest.cpp (the mpi executor's tests, under mpirun) are api's.
# - bench/ and fuzz/ are tools over the whole library (they time kernels and fuzz
#   decoders and the parser, internals included): not checked. tests/layer_probe/
#   includes upward on purpose (the layer_probe ctests).
# - A C++ file anywhere else, or a public header of no layer, fails the check until it
#   is given one here (and, for headers, in cmake/TesseraLayers.cmake).
# Which public header belongs to which layer is read from cmake/TesseraLayers.cmake, the
# list the build uses.
# Usage: tests/check_layers.sh [REPO_ROOT]
set -euo pipefail
root="${1:-$(dirname "$0")/..}"
cd "$root"

order=(core codecs stores sharding zarr memory plan exec api front)
declare -A rank=()
for index in "${!order[@]}"; do rank[${order[$index]}]=$index; done

# Public headers: entry of include/tessera (a folder or a file) -> layer.
declare -A header_layer=()
while read -r layer entries; do
  for entry in $entries; do header_layer[$entry]=$layer; done
done < <(awk '
  /^set\(TESSERA_LAYER_HEADERS_/ { collecting = 1; line = "" }
  collecting { line = line " " $0 }
  collecting && /\)/ {
    sub(/^ *set\(TESSERA_LAYER_HEADERS_/, "", line); sub(/\).*/, "", line)
    print line; collecting = 0
  }' cmake/TesseraLayers.cmake)
if [ "${#header_layer[@]}" -eq 0 ]; then
  echo "check_layers: no TESSERA_LAYER_HEADERS_<layer> found in cmake/TesseraLayers.cmake"
  exit 1
fi

# Sets `layer` to the layer of public header tessera/$1 ("" when none).
public_layer() {
  local path="${1#tessera/}"
  layer="${header_layer[$path]:-}"
  [ -n "$layer" ] || layer="${header_layer[${path%%/*}]:-}"
}

# Sets `layer` to what the file at path $1 is: a layer, front, support, tools, probe or
# "" (unknown).
file_layer() {
  case "$1" in
    include/tessera/*) public_layer "${1#include/}" ;;
    src/core/*) layer=core ;;
    src/storage/codecs/*) layer=codecs ;;
    src/storage/stores/*) layer=stores ;;
    src/storage/sharding/*) layer=sharding ;;
    src/storage/zarr/*) layer=zarr ;;
    src/memory/*) layer=memory ;;
    src/plan/*) layer=plan ;;  # kernels/ included
    # The mpi executor's tests run plans under mpirun through the public API, as api's
    # tests do (src/exec/mpi/CMakeLists.txt builds them apart from exec's).
    src/exec/mpi/*_mpitest.cpp) layer=api ;;
    src/exec/*) layer=exec ;;
    src/api/*) layer=api ;;
    src/cli/* | tests/interop/* | tests/consumer/* | python/*) layer=front ;;
    tests/support/*) layer=support ;;
    tests/layer_probe/*) layer=probe ;;
    bench/* | fuzz/*) layer=tools ;;
    *) layer="" ;;
  esac
}

# Every C++ file of the work tree (tracked or new, not ignored: no build folders).
if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  mapfile -t files < <(git ls-files --cached --others --exclude-standard -- \
    '*.cpp' '*.hpp' '*.h' '*.cc' | sort -u)
else
  mapfile -t files < <(find . -path './build*' -prune -o \
    \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o -name '*.cc' \) -print |
    sed 's|^\./||' | sort)
fi

# Sets `name` to what include line $1 names.
included_name() {
  name="${1#*include}"
  name="${name#*[\"<]}"
  name="${name%%[\">]*}"
}

failures=0
fail() {
  echo "$1"
  failures=$((failures + 1))
}

declare -A layer_of_file=()
for file in "${files[@]}"; do
  [ -f "$file" ] || continue  # deleted but not yet staged
  file_layer "$file"
  if [ -z "$layer" ]; then
    fail "no layer for $file: give its folder one in tests/check_layers.sh (and, for a public header, in cmake/TesseraLayers.cmake)"
    continue
  fi
  layer_of_file[$file]=$layer
done

# Every quoted include, and every <tessera/...> one, of the checked files:
# FILE:LINE:#include "NAME".
declare -a includes=()
checked=()
for file in "${!layer_of_file[@]}"; do
  case "${layer_of_file[$file]}" in tools | probe) ;; *) checked+=("$file") ;; esac
done
if [ "${#checked[@]}" -gt 0 ]; then
  mapfile -t includes < <(grep -nHE '^[[:space:]]*#[[:space:]]*include[[:space:]]*("|<tessera/)' \
    "${checked[@]}" || true)
fi

# tests/support headers: the highest layer of what they include (core when nothing),
# through each other too (a few passes reach the fixed point).
declare -A support_rank=()
for file in "${!layer_of_file[@]}"; do
  [ "${layer_of_file[$file]}" = support ] && support_rank[${file#tests/support/}]=0
done
for pass in 1 2 3; do
  for hit in "${includes[@]}"; do
    file="${hit%%:*}"
    [ "${layer_of_file[$file]}" = support ] || continue
    included_name "$hit"
    own="${support_rank[${file#tests/support/}]}"
    if [[ "$name" == tessera/* ]]; then
      public_layer "$name"
      [ -n "$layer" ] && [ "${rank[$layer]}" -gt "$own" ] && own="${rank[$layer]}"
    elif [ -n "${support_rank[$name]:-}" ] && [ "${support_rank[$name]}" -gt "$own" ]; then
      own="${support_rank[$name]}"
    fi
    support_rank[${file#tests/support/}]=$own
  done
done

for hit in "${includes[@]}"; do
  file="${hit%%:*}"
  own_layer="${layer_of_file[$file]}"
  [ "$own_layer" = support ] && continue  # ranked above, checked where they are used
  included_name "$hit"
  if [[ "$name" == tessera/* ]]; then
    public_layer "$name"
    if [ -z "$layer" ]; then
      [ -e "include/$name" ] &&
        fail "include/$name belongs to no layer (cmake/TesseraLayers.cmake): $hit"
      continue  # a missing header fails to compile; not this check's business
    fi
    if [ "$own_layer" = front ]; then
      case "$layer" in
        core | api) ;;
        plan) [[ "$name" != */internal/* ]] ||
          fail "front end includes plan internals (tessera/plan/internal/: the engine's, not installed): $hit" ;;
        exec) [ "$name" = tessera/exec/execution_report.hpp ] ||
          [ "$name" = tessera/exec/remote_tasks.hpp ] ||
          fail "front end includes exec internals (only execution_report.hpp and remote_tasks.hpp are public): $hit" ;;
        *) fail "front end includes $layer/ (reach it through tessera/api/ or tessera.hpp): $hit" ;;
      esac
    elif [ "${rank[$layer]}" -gt "${rank[$own_layer]}" ]; then
      fail "layer violation ($own_layer includes $layer, a higher layer): $hit"
    fi
  elif [ -n "${support_rank[$name]:-}" ] && [ ! -e "$(dirname "$file")/$name" ]; then
    if [ "$own_layer" != front ] && [ "${support_rank[$name]}" -gt "${rank[$own_layer]}" ]; then
      fail "layer violation ($own_layer includes tests/support/$name, which uses ${order[${support_rank[$name]}]}): $hit"
    fi
  fi
done

if [ "$failures" -gt 0 ]; then
  echo "$failures problem(s): dependencies must point down the layer stack; see ../shared/DESIGN.md"
  exit 1
fi
echo "layers ok: dependencies point down only (${#layer_of_file[@]} files)"
