// Generators: arrays whose elements are a function of their index (full, arange,
// random), filled tile by tile so that a fused chain never holds a whole block of them.
//
//   TilePosition where{.array_shape = {100, 50}, .block_start = {20, 0},
//                      .block_shape = {10, 50}, .tile_start = 120, .count = 64};
//   FillConstant(Scalar(1.5), float32, tile, where.count);
//   FillArange(0, 0.5, float64, tile, where);      // 1-D arrays only
//   FillRandom(seed, tile, where);                 // float64 in [0, 1)
//
// A tile is `count` consecutive elements, in C order, of one block, starting at the
// block-local linear index `tile_start`. Random values depend only on the seed and the
// element's global C-order linear index, so the same seed gives the same array whatever
// the chunking or tiling (a counter-based generator, no shared state, thread-safe).
#pragma once

#include <cstdint>
#include <functional>

#include "tessera/core/dtype.hpp"
#include "tessera/core/scalar.hpp"
#include "tessera/core/shape.hpp"

namespace tessera::kernels {

struct TilePosition {
  Shape array_shape;
  Shape block_start;
  Shape block_shape;
  Index tile_start = 0;  // block-local C-order linear index of the tile's first element
  Index count = 0;
};

// Calls fn(global_linear_index, count, tile_offset) for each run of the tile that is
// contiguous in the array (a run never crosses a row of the block's last dimension).
void ForEachRun(const TilePosition& tile,
                const std::function<void(Index global, Index count, Index offset)>& fn);

void FillConstant(const Scalar& value, DType dtype, void* out, Index count);
// out[k] = start + step * i for the element of global index i, converted to dtype
// (as numpy's arange computes in the dtype of its result).
void FillArange(double start, double step, DType dtype, void* out, const TilePosition& tile);
// Uniform float64 in [0, 1): 53 random bits of a 64-bit mix of (seed, global index).
void FillRandom(std::uint64_t seed, double* out, const TilePosition& tile);

// Copies the tile from a block held in memory whose element (i0, i1, ...) sits at
// byte offset sum(i_d * byte_strides[d]) from `source`; a stride of 0 broadcasts that
// dimension. `tile.block_shape` is the shape being iterated (the consumer's block).
void GatherStrided(const std::byte* source, const Shape& byte_strides, std::int64_t itemsize,
                   std::byte* out, const TilePosition& tile);

}  // namespace tessera::kernels
