#include "region_walk.hpp"

#include <algorithm>

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
  const std::size_t ndim = region.shape.size();
  TouchedBox touched{Shape(ndim), Region{Shape(ndim), Shape(ndim)}, Shape(ndim)};
  for (std::size_t dim = ndim; dim-- > 0;) {
    touched.block[dim] = range.first[dim] + linear % range.counts[dim];
    linear /= range.counts[dim];
  }
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

Index LinearInRange(const TouchedRange& range, std::span<const Index> block) {
  Index linear = 0;
  for (std::size_t dim = 0; dim < block.size(); ++dim) {
    linear = linear * range.counts[dim] + (block[dim] - range.first[dim]);
  }
  return linear;
}

Index ByteOffset(std::span<const Index> position, std::span<const Index> byte_strides) {
  Index offset = 0;
  for (std::size_t dim = 0; dim < position.size(); ++dim) {
    offset += position[dim] * byte_strides[dim];
  }
  return offset;
}

}  // namespace tessera::zarr_detail
