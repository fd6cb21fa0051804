#!/usr/bin/env bash
# Runs each libFuzzer target for SECONDS on a scratch copy of its seed corpus.
# Usage: fuzz/run.sh BUILD_DIR SECONDS [TARGET...]
#   BUILD_DIR  a build configured with -DCMAKE_CXX_COMPILER=clang++ -DTESSERA_BUILD_FUZZ=ON
#              whose fuzz targets are built (ninja -C BUILD_DIR fuzz_zarr_metadata ...)
#   TARGET     run only these targets (default: all of them)
# Exits non-zero when any target crashes, leaks, times out or runs out of memory; the
# input that did it is saved under BUILD_DIR/fuzz-artifacts/<target>/ for replay:
#   BUILD_DIR/fuzz/<target> BUILD_DIR/fuzz-artifacts/<target>/crash-...
set -uo pipefail

if [ "$#" -lt 2 ]; then
  echo "usage: $0 BUILD_DIR SECONDS [TARGET...]" >&2
  exit 2
fi
build_dir="$(cd "$1" && pwd)" || exit 2
seconds="$2"
shift 2
only=("$@")
source_dir="$(cd "$(dirname "$0")" && pwd)"

# target:corpus folder
targets=("fuzz_zarr_metadata:metadata" "fuzz_chunk_decode:chunk" "fuzz_expression:expression"
         "fuzz_graph_codec:graph" "fuzz_s3_response:s3_response")

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

failed=0
for entry in "${targets[@]}"; do
  target="${entry%%:*}"
  corpus="${entry##*:}"
  if [ "${#only[@]}" -gt 0 ] && [[ ! " ${only[*]} " =~ " $target " ]]; then
    continue
  fi
  binary="$build_dir/fuzz/$target"
  if [ ! -x "$binary" ]; then
    echo "missing $binary: build it first (ninja -C $build_dir $target)" >&2
    failed=1
    continue
  fi
  artifacts="$build_dir/fuzz-artifacts/$target"
  mkdir -p "$artifacts" "$scratch/$target"
  cp -r "$source_dir/corpus/$corpus/." "$scratch/$target/"
  # A target's dictionary (fuzz/<corpus>.dict), when it has one: tokens its inputs use.
  dict=()
  if [ -f "$source_dir/$corpus.dict" ]; then dict=(-dict="$source_dir/$corpus.dict"); fi
  echo "== $target: ${seconds}s on a copy of fuzz/corpus/$corpus"
  # -timeout: one input running 25 s is a hang, not a slow case.
  "$binary" -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=65536 -timeout=25 \
    -print_final_stats=1 "${dict[@]}" -artifact_prefix="$artifacts/" "$scratch/$target" \
    > "$scratch/$target.log" 2>&1
  status=$?
  tail -n 25 "$scratch/$target.log"
  if [ "$status" -ne 0 ]; then
    echo "== $target FAILED (exit $status); artifacts in $artifacts" >&2
    cp "$scratch/$target.log" "$artifacts/last-run.log"
    failed=1
  else
    echo "== $target ok"
  fi
done
exit "$failed"
