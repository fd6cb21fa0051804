#include "region_copy.hpp"

#include <algorithm>
#include <cstring>

namespace tessera::planner {

void CopyBox(const NDArray& source, const Shape& source_start, NDArray& target,
             const Shape& target_start, const Region& box) {
  const std::size_t ndim = box.shape.size();
  const std::int64_t itemsize = source.dtype().itemsize();
  if (ShapeSize(box.shape) == 0) return;
  if (ndim == 0) {
    std::memcpy(target.mutable_bytes().data(), source.bytes().data(),
                static_cast<std::size_t>(itemsize));
    return;
  }
  const Shape source_strides = CStrides(source.shape());
  const Shape target_strides = CStrides(target.shape());
  const std::byte* const from = source.bytes().data();
  std::byte* const to = target.mutable_bytes().data();
  const Index row = box.shape[ndim - 1];
  const std::size_t row_bytes = static_cast<std::size_t>(row * itemsize);
  // Iterate over every dimension but the last; each step copies one row.
  Shape index(ndim, 0);
  const Index rows = ShapeSize(std::span(box.shape).first(ndim - 1));
  for (Index r = 0; r < rows; ++r) {
    Index source_offset = 0;
    Index target_offset = 0;
    for (std::size_t d = 0; d < ndim; ++d) {
      const Index global = box.start[d] + index[d];
      source_offset += (global - source_start[d]) * source_strides[d];
      target_offset += (global - target_start[d]) * target_strides[d];
    }
    std::memcpy(to + target_offset * itemsize, from + source_offset * itemsize, row_bytes);
    for (std::size_t d = ndim - 1; d-- > 0;) {
      if (++index[d] < box.shape[d]) break;
      index[d] = 0;
    }
  }
}

Region Intersect(const Region& a, const Region& b) {
  Region result{Shape(a.start.size()), Shape(a.start.size())};
  for (std::size_t d = 0; d < a.start.size(); ++d) {
    const Index begin = std::max(a.start[d], b.start[d]);
    const Index end = std::min(a.start[d] + a.shape[d], b.start[d] + b.shape[d]);
    result.start[d] = begin;
    result.shape[d] = std::max<Index>(end - begin, 0);
  }
  return result;
}

Index CountTouchedBlocks(const ChunkGrid& grid, const Region& region) {
  Index count = 1;
  for (std::size_t d = 0; d < region.shape.size(); ++d) {
    if (region.shape[d] == 0) return 0;
    const Index first = region.start[d] / grid.chunks()[d];
    const Index last = (region.start[d] + region.shape[d] - 1) / grid.chunks()[d];
    count *= last - first + 1;
  }
  return count;
}

Index RegionBytes(const Region& region, DType dtype) {
  return ShapeSize(region.shape) * dtype.itemsize();
}

std::shared_ptr<const NDArray> CopyRegionOf(const NDArray& whole, const Region& region) {
  auto out = std::make_shared<NDArray>(region.shape, whole.dtype());
  CopyBox(whole, Shape(region.start.size(), 0), *out, region.start, region);
  return out;
}

std::optional<Shape> ExactBlock(const ChunkGrid& grid, const Region& region) {
  Shape block(region.start.size());
  for (std::size_t d = 0; d < block.size(); ++d) {
    if (region.start[d] % grid.chunks()[d] != 0) return std::nullopt;
    block[d] = region.start[d] / grid.chunks()[d];
    if (block[d] >= grid.grid_shape()[d]) return std::nullopt;
  }
  if (grid.BlockRegion(block) != region) return std::nullopt;
  return block;
}

}  // namespace tessera::planner
