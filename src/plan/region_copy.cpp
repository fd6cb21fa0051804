#include "region_copy.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>

#include "tessera/core/memory_account.hpp"

namespace tessera::planner {

namespace {

// Calls row(global) with the global position of the first element of every row of `box`
// (a row: the last dimension), in C order. `box` is not empty and has a dimension.
template <class Row>
void ForEachRowOf(const Region& box, Row&& row) {
  const std::size_t ndim = box.shape.size();
  Shape index(ndim, 0);
  Shape global = box.start;
  const Index rows = ShapeSize(std::span(box.shape).first(ndim - 1));
  for (Index r = 0; r < rows; ++r) {
    for (std::size_t d = 0; d < ndim; ++d) global[d] = box.start[d] + index[d];
    row(static_cast<const Shape&>(global));
    for (std::size_t d = ndim - 1; d-- > 0;) {
      if (++index[d] < box.shape[d]) break;
      index[d] = 0;
    }
  }
}

}  // namespace

Index OffsetIn(const Shape& global, const Shape& start, const Shape& strides) {
  Index offset = 0;
  for (std::size_t d = 0; d < global.size(); ++d) offset += (global[d] - start[d]) * strides[d];
  return offset;
}

BytePlace PlaceIn(const NDArray& whole, const Shape& whole_start, const Shape& region_start) {
  const Index itemsize = whole.dtype().itemsize();
  BytePlace place{0, CStrides(whole.shape())};
  place.offset = OffsetIn(region_start, whole_start, place.strides) * itemsize;
  for (Index& stride : place.strides) stride *= itemsize;
  return place;
}

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
  const auto row_bytes = static_cast<std::size_t>(box.shape[ndim - 1] * itemsize);
  ForEachRowOf(box, [&](const Shape& global) {
    std::memcpy(to + OffsetIn(global, target_start, target_strides) * itemsize,
                from + OffsetIn(global, source_start, source_strides) * itemsize, row_bytes);
  });
}

void TouchRegionPages(NDArray& target, const Shape& target_start, const Region& box) {
  const std::size_t ndim = box.shape.size();
  if (ShapeSize(box.shape) == 0 || ndim == 0) return;
  const std::int64_t itemsize = target.dtype().itemsize();
  const Shape strides = CStrides(target.shape());
  std::byte* const base = target.mutable_bytes().data();
  ForEachRowOf(box, [&](const Shape& global) {
    TouchPages(base + OffsetIn(global, target_start, strides) * itemsize,
               box.shape[ndim - 1] * itemsize);
  });
}

bool IsOneRun(const Shape& whole, const Region& region) {
  std::size_t d = 0;
  while (d < whole.size() && region.shape[d] == 1) ++d;  // single index: no stride taken
  for (++d; d < whole.size(); ++d) {
    if (region.start[d] != 0 || region.shape[d] != whole[d]) return false;
  }
  return true;
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
