#include "tessera/core/chunk_grid.hpp"

#include <algorithm>

#include "tessera/core/errors.hpp"

namespace tessera {

ChunkGrid::ChunkGrid(Shape shape, Shape chunks)
    : shape_(std::move(shape)), chunks_(std::move(chunks)) {
  if (shape_.size() != chunks_.size()) {
    throw InvalidArgument("chunks " + ShapeToString(chunks_) + " have " +
                          std::to_string(chunks_.size()) + " dimensions but shape " +
                          ShapeToString(shape_) + " has " + std::to_string(shape_.size()));
  }
  grid_shape_.resize(shape_.size());
  for (std::size_t dim = 0; dim < shape_.size(); ++dim) {
    if (shape_[dim] < 0) {
      throw InvalidArgument("shape " + ShapeToString(shape_) +
                            " has a negative extent in dimension " + std::to_string(dim));
    }
    if (chunks_[dim] < 1) {
      throw InvalidArgument("chunks " + ShapeToString(chunks_) +
                            " must be >= 1 in every dimension (dimension " + std::to_string(dim) +
                            " is " + std::to_string(chunks_[dim]) + ")");
    }
    grid_shape_[dim] = CeilDiv(shape_[dim], chunks_[dim]);
  }
  num_blocks_ = ShapeSize(grid_shape_);
  ShapeSize(shape_);  // rejects shapes whose element count overflows
}

void ChunkGrid::CheckBlock(std::span<const Index> block) const {
  bool valid = block.size() == grid_shape_.size();
  for (std::size_t dim = 0; valid && dim < block.size(); ++dim) {
    valid = block[dim] >= 0 && block[dim] < grid_shape_[dim];
  }
  if (!valid) {
    throw InvalidArgument("block index " + ShapeToString(block) + " is outside the chunk grid " +
                          ShapeToString(grid_shape_));
  }
}

Region ChunkGrid::BlockRegion(std::span<const Index> block) const {
  Region region{Shape(block.size()), Shape(block.size())};
  for (std::size_t dim = 0; dim < block.size(); ++dim) {
    region.start[dim] = block[dim] * chunks_[dim];
    region.shape[dim] = std::min(chunks_[dim], shape_[dim] - region.start[dim]);
  }
  return region;
}

Shape ChunkGrid::BlockShape(std::span<const Index> block) const { return BlockRegion(block).shape; }

Index ChunkGrid::LinearIndex(std::span<const Index> block) const {
  Index linear = 0;
  for (std::size_t dim = 0; dim < block.size(); ++dim) {
    linear = linear * grid_shape_[dim] + block[dim];
  }
  return linear;
}

Shape ChunkGrid::BlockIndex(Index linear_index) const {
  return UnravelIndex(linear_index, grid_shape_);
}

}  // namespace tessera
