// ChunkGrid: a regular grid of blocks over an N-dimensional shape.
//
//   ChunkGrid grid({10, 7}, {4, 4});   // 3 x 2 blocks; the last row/column is partial
//   grid.grid_shape();                 // {3, 2}
//   grid.BlockRegion({2, 1});          // start {8, 4}, shape {2, 3}
//   grid.LinearIndex({2, 1});          // 5 (C order over blocks)
//
// Preconditions are checked at construction: equal ranks, chunk extents >= 1,
// shape extents >= 0. A dimension of extent 0 has 0 blocks; a 0-d grid has 1 block.
// Immutable and thread-safe after construction.
#pragma once

#include <span>

#include "tessera/core/shape.hpp"

namespace tessera {

// A box of an array: `start` (inclusive) and `shape` per dimension.
struct Region {
  Shape start;
  Shape shape;
  friend bool operator==(const Region&, const Region&) = default;
};

class ChunkGrid {
 public:
  // Throws InvalidArgument naming the offending dimension.
  ChunkGrid(Shape shape, Shape chunks);

  const Shape& shape() const { return shape_; }
  const Shape& chunks() const { return chunks_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  // Number of blocks per dimension.
  const Shape& grid_shape() const { return grid_shape_; }
  Index num_blocks() const { return num_blocks_; }

  // Region covered by a block, clipped at the array's edge.
  // REQUIRES: 0 <= block[dim] < grid_shape()[dim].
  Region BlockRegion(std::span<const Index> block) const;
  Shape BlockShape(std::span<const Index> block) const;

  // C-order position of a block among all blocks, and back.
  Index LinearIndex(std::span<const Index> block) const;
  Shape BlockIndex(Index linear_index) const;

  // Throws InvalidArgument if `block` is not a valid block index of this grid.
  void CheckBlock(std::span<const Index> block) const;

  friend bool operator==(const ChunkGrid& a, const ChunkGrid& b) {
    return a.shape_ == b.shape_ && a.chunks_ == b.chunks_;
  }

 private:
  Shape shape_;
  Shape chunks_;
  Shape grid_shape_;
  Index num_blocks_ = 1;
};

}  // namespace tessera
