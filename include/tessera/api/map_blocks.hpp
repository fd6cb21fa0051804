// map_blocks: a user's C++ function applied block by block.
//
//   auto smoothed = tessera::map_blocks(
//       [](std::span<const tessera::NDArray> in, const tessera::BlockInfo& info) {
//         tessera::NDArray out(in[0].shape(), tessera::float32);
//         ...                                   // may allocate scratch of its own
//         return out;
//       },
//       {t2}, tessera::float32, /*extra_projected_mem=*/64 << 20);
//
// Output block i is fn(input blocks i...): every input must have the same shape and
// chunks (InvalidArgument otherwise). The plan counts, per task, the input blocks, the
// output block and `extra_projected_mem` (what fn allocates beyond its result); a
// function that allocates more than it declares breaks the memory promise, and the
// executor's measurement shows it. fn is called concurrently for different blocks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/api/array.hpp"
#include "tessera/plan/block_function.hpp"

namespace tessera {

// The output has the first input's shape and chunks. `recipe` (block_function.hpp) is
// how another process rebuilds fn: without one, plans reading the result run in this
// process only (executors "threads", "sync", "mpi"), not on Dask or Ray workers.
Array map_blocks(BlockFunction fn, const std::vector<Array>& inputs, DType dtype,
                 std::int64_t extra_projected_mem = 0, std::string identity = "",
                 FunctionRecipe recipe = {});

}  // namespace tessera
