#!/usr/bin/env bash
# Checks DESIGN.md's rule that dependencies point down only: no file of a layer
# includes a header of a layer above it. Layers, bottom to top:
#   core < storage/codecs < storage/stores < storage/zarr < memory < plan < exec < api < cli
# Usage: tests/check_layers.sh [REPO_ROOT]
set -euo pipefail
root="${1:-$(dirname "$0")/..}"
cd "$root"

# Header patterns that belong to each layer.
declare -A pattern=(
  [core]='tessera/core/'
  [codecs]='tessera/storage/codec\.hpp|storage/codecs/'
  [stores]='tessera/storage/(store|memory_store|directory_store)\.hpp|storage/stores/'
  [zarr]='tessera/storage/zarr_|storage/zarr/'
  [memory]='tessera/memory/'
  [plan]='tessera/plan/'
  [exec]='tessera/exec/'
  [api]='tessera/api/|tessera/tessera\.hpp'
)
order=(core codecs stores zarr memory plan exec api)
# Where each layer's files live.
declare -A places=(
  [core]='include/tessera/core src/core'
  [codecs]='include/tessera/storage/codec.hpp src/storage/codecs'
  [stores]='include/tessera/storage/store.hpp include/tessera/storage/memory_store.hpp include/tessera/storage/directory_store.hpp src/storage/stores'
  [zarr]='include/tessera/storage/zarr_array.hpp include/tessera/storage/zarr_metadata.hpp src/storage/zarr'
  [memory]='include/tessera/memory src/memory'
  [plan]='include/tessera/plan src/plan'
  [exec]='include/tessera/exec src/exec'
  [api]='include/tessera/api src/api'
)

failures=0
for index in "${!order[@]}"; do
  layer="${order[$index]}"
  above=""
  for higher in "${order[@]:$((index + 1))}"; do
    above="${above:+$above|}${pattern[$higher]}"
  done
  [ -n "$above" ] || continue
  for place in ${places[$layer]}; do
    [ -e "$place" ] || continue
    while IFS= read -r hit; do
      case "$hit" in *_test.cpp:*) continue ;; esac  # tests may use anything below the api
      echo "layer violation ($layer includes a higher layer): $hit"
      failures=$((failures + 1))
    done < <(grep -rnE "#include \"($above)" "$place" 2>/dev/null || true)
  done
done
if [ "$failures" -gt 0 ]; then
  echo "$failures include(s) point up the layer stack; see ../shared/DESIGN.md"
  exit 1
fi
echo "layers ok: dependencies point down only"
