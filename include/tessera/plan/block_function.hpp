// BlockFunction: a user's kernel for map_blocks (api/map_blocks.hpp), called once per
// output block with the input blocks of the same index and where the block lies.
//
//   tessera::BlockFunction twice = [](std::span<const tessera::NDArray> in,
//                                     const tessera::BlockInfo& block) { ... };
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "tessera/core/chunk_grid.hpp"
#include "tessera/core/dtype.hpp"
#include "tessera/core/ndarray.hpp"
#include "tessera/core/shape.hpp"

namespace tessera {

// Where map_blocks' function is: the output block's index and region.
struct BlockInfo {
  Shape block_index;
  Region region;
};
// A user kernel: the output block from the input blocks (one per input, each the
// block with the same index). Must return an NDArray of the output block's shape and
// the declared dtype. Called concurrently for different blocks.
using BlockFunction = std::function<NDArray(std::span<const NDArray> inputs, const BlockInfo&)>;

// The bytes from which another process rebuilds a BlockFunction (its front end's loader,
// plan/internal/graph_codec.hpp): a Python function pickled, say. Called only when a plan
// is shipped to other processes (the Dask and Ray executors); empty: not shippable.
using FunctionRecipe = std::function<std::string()>;

// Rebuilds a map_blocks function from its recipe bytes (FunctionRecipe) for output dtype
// `dtype`, in the process a plan was sent to. A front end installs one per process (the
// Python module's unpickles); null uninstalls it. Thread-safe to install and to call.
using FunctionLoader = std::function<BlockFunction(std::string_view recipe, DType dtype)>;
void SetFunctionLoader(FunctionLoader loader);

}  // namespace tessera
