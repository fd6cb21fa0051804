// PlanOptions: how a plan is optimized; ZarrTarget: where to_zarr writes.
//
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessera/core/shape.hpp"
#include "tessera/plan/op_info.hpp"
#include "tessera/storage/codec.hpp"
#include "tessera/storage/file_ops.hpp"
#include "tessera/storage/store.hpp"
#include "tessera/storage/zarr_metadata.hpp"

namespace tessera {

struct PlanOptions {
  // Join chains and trees of blockwise ops into one task (see docs/memory-model.md).
  // false is the same as naming "fusion" in disabled_passes.
  bool fuse = true;
  // Planner passes to skip, by name (the environment variable TESSERA_DISABLE_PASSES
  // adds to them, comma-separated): rechunk_of_rechunk, power_by_constant, fusion,
  // fusion_split, tiers, history. The results do not change; the plan may cost more
  // (or, without fusion_split or tiers — intermediates then go to disk, with codec
  // buffers — be refused under a budget only the pass made fit). Other names, and the
  // passes a plan cannot be made without (lowering, memory_check, ...), are an
  // InvalidArgument.
  std::vector<std::string> disabled_passes;
  // A fused task reads at most this many stored arrays...
  int max_fused_sources = 8;
  // ...and at most this many stored blocks in all.
  Index max_fused_input_blocks = 64;
  // Elements per tile of a fused elementwise chain: each fused node holds one tile.
  Index tile_elements = 4096;
  // Where intermediates live: kNone chooses per op (RAM while they fit in what
  // total_mem leaves after the running tasks, local disk otherwise); kMemory or kDisk
  // force one.
  Tier intermediate_tier = Tier::kNone;
  // With intermediate_tier kMemory, intermediates whose bytes exceed what total_mem
  // leaves after the running tasks (workers x allowed_mem) and the chunk buffer pool make
  // planning throw MemoryBudgetError; true plans them all the same, and the plan carries a
  // warning saying by how much total_mem is exceeded (FinalizedPlan::warnings, summary).
  bool allow_over_total_mem = false;
  // Compression of intermediates on disk.
  std::optional<CodecConfig> disk_compressor = ParseCodecSpec("blosc-lz4");
};

// How to_zarr writes an array: its stored metadata and what it may replace or keep.
// Described once: ToZarrOptions (the API's, with how to compute) and ZarrTarget (the
// plan's, with where to write) are both these settings.
struct ZarrWriteOptions {
  // The Zarr format written: 2 (.zarray) or 3 (zarr.json); nullopt: the format of the
  // array's first stored source (from_zarr), or 3 when it reads none.
  std::optional<int> zarr_format;
  // Zarr v3 sharding: each shard, a whole multiple of the array's chunks, is one stored
  // value holding inner chunks of the array's chunks (the array is rechunked to the
  // shards first when its chunks are not them); tasks write whole shards. nullopt:
  // unsharded. Requires zarr_format 3 (or nullopt, which then means 3).
  std::optional<Shape> shards;
  // Each (inner) chunk ends in its CRC-32C (v3's crc32c codec), checked on every read.
  // Zarr v3 only.
  bool checksum = false;
  // Stores float32 values as float16 (v3 "float16", v2 "<f2"), as the source of a
  // rechunk may: values beyond float16's range become infinities.
  bool float16 = false;
  // Writes consolidated metadata into the group the array is written into (when it is
  // written inside one). A group that already has consolidated metadata always gets it
  // updated, so that readers trusting it see the new array.
  bool consolidated = false;
  std::optional<CodecConfig> compressor = ParseCodecSpec("blosc-lz4");  // nullopt: raw
  std::vector<std::string> dimension_names;  // xarray's _ARRAY_DIMENSIONS
  // The fill_value; nullopt: NaN for floating dtypes; for others null in v2 (a 0 would
  // make xarray read every real zero as missing), zero (false) in v3, where xarray does
  // not take fill_value for missing data.
  std::optional<FillValue> fill_value;
  std::string attributes_json = "{}";         // other .zattrs entries (units, ...): a JSON object
  ByteOrder byte_order = ByteOrder::kLittle;  // of the stored chunks (values are the same)
  // Keep the chunks a previous, interrupted run of the same work wrote (same sources,
  // target metadata and task layout, as its partial output's marker records; anything
  // else is refused); their tasks are skipped.
  bool resume = false;
  // Replace an array already at the target (false: InvalidArgument before any work).
  bool overwrite = true;
};

// Where and how to_zarr writes.
struct ZarrTarget : ZarrWriteOptions {
  std::shared_ptr<Store> store;  // the store to write into, at `path`...
  std::string path;
  // The inner chunks of a sharded target (the array's chunks before it was rechunked to
  // its shards); set by to_zarr.
  Shape inner_chunks;
  std::filesystem::path directory;  // ...or, when store is null, this directory
  // The calls that change files of a directory target (null: DefaultFileOps()); tests
  // inject faults here.
  std::shared_ptr<FileOps> file_ops;
};

}  // namespace tessera
