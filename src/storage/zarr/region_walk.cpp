#include "region_walk.hpp"

#include <algorithm>
#include <utility>

namespace tessera::zarr_detail {

TouchedRange TouchedBlocks(const ChunkGrid& grid, const Region& region) {
  const std::size_t ndim = region.shape.size();
  TouchedRange range{Shape(ndim), Shape(ndim)};
  for (std::size_t dim = 0; dim < ndim; ++dim) {
    const Index chunk = grid.chunks()[dim];
    range.first[dim] = region.start[dim] / chunk;
    range.counts[dim] = (region.start[dim] + region.shape[dim] - 1) / chunk - range.first[dim] + 1;
  }
  return range;
}

TouchedBox TouchedBoxAt(const ChunkGrid& grid, const Region& region, const TouchedRange& range,
                        Index linear) {
  Shape block(region.shape.size());
  for (std::size_t dim = block.size(); dim-- > 0;) {
    block[dim] = range.first[dim] + linear % range.counts[dim];
    linear /= range.counts[dim];
  }
  return TouchedBoxOf(grid, region, std::move(block));
}

TouchedBox TouchedBoxOf(const ChunkGrid& grid, const Region& region, Shape block) {
  const std::size_t ndim = region.shape.size();
  TouchedBox touched{std::move(block), Region{Shape(ndim), Shape(ndim)}, Shape(ndim)};
  for (std::size_t dim = 0; dim < ndim; ++dim) {
    const Index chunk = grid.chunks()[dim];
    const Index block_start = touched.block[dim] * chunk;
    const Index begin = std::max(block_start, region.start[dim]);
    const Index end = std::min(block_start + chunk, region.start[dim] + region.shape[dim]);
    touched.box.start[dim] = begin - block_start;
    touched.box.shape[dim] = end - begin;
    touched.out_start[dim] = begin - region.start[dim];
  }
  return touched;
}

Index ByteOffset(std::span<const Index> position, std::span<const Index> byte_strides) {
  Index offset = 0;
  for (std::size_t dim = 0; dim < position.size(); ++dim) {
    offset += position[dim] * byte_strides[dim];
  }
  return offset;
}

}  // namespace tessera::zarr_detail
