// Copying boxes between C-order blocks: the one loop every region read and result
// assembly uses. Internal to src/plan.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "tessera/core/chunk_grid.hpp"
#include "tessera/core/ndarray.hpp"

namespace tessera::planner {

// Copies the box `box` (in global coordinates) from `source`, a C-order block whose
// first element is at global `source_start`, into `target`, a C-order block whose
// first element is at global `target_start`. The box must lie inside both.
void CopyBox(const NDArray& source, const Shape& source_start, NDArray& target,
             const Shape& target_start, const Region& box);

// The element offset of global position `global` in a C-order block whose first element
// is at global `start`, its element strides `strides` (CStrides of its shape).
Index OffsetIn(const Shape& global, const Shape& start, const Shape& strides);

// Where the region starting at global `region_start` lies in `whole`, a C-order array
// whose first element is at global `whole_start`: the byte offset of its first element,
// and whole's byte strides (one per dimension).
struct BytePlace {
  Index offset = 0;
  Shape strides;
};
BytePlace PlaceIn(const NDArray& whole, const Shape& whole_start, const Shape& region_start);

// Writes one byte of `box` (global coordinates) in every memory page `box` spans of
// `target`, a C-order block whose first element is at global `target_start`, so that the
// pages are faulted in; only bytes of `box` are written (its values are unspecified
// afterwards).
void TouchRegionPages(NDArray& target, const Shape& target_start, const Region& box);

// The intersection of two regions; nullopt-like empty shape (size 0) when disjoint.
Region Intersect(const Region& a, const Region& b);

// Calls fn(block_index) for each block of `grid` that `region` touches, in C order.
template <class Fn>
void ForEachTouchedBlock(const ChunkGrid& grid, const Region& region, Fn&& fn) {
  const std::size_t ndim = region.shape.size();
  if (ShapeSize(region.shape) == 0) return;
  Shape first(ndim), last(ndim), block(ndim);
  for (std::size_t d = 0; d < ndim; ++d) {
    first[d] = region.start[d] / grid.chunks()[d];
    last[d] = (region.start[d] + region.shape[d] - 1) / grid.chunks()[d];
  }
  block = first;
  while (true) {
    fn(static_cast<const Shape&>(block));
    std::size_t d = ndim;
    while (d > 0) {
      --d;
      if (++block[d] <= last[d]) break;
      block[d] = first[d];
      if (d == 0) return;
    }
    if (ndim == 0) return;
  }
}

// Number of blocks of `grid` that `region` touches.
Index CountTouchedBlocks(const ChunkGrid& grid, const Region& region);

// Bytes of `region` of an array of `dtype`.
Index RegionBytes(const Region& region, DType dtype);

// Whether `region` (not empty) of a C-order array of shape `whole` is one run of its
// memory: every dimension after the first the region spans by more than one is whole.
bool IsOneRun(const Shape& whole, const Region& region);

// A copy of `region` of an array held whole.
std::shared_ptr<const NDArray> CopyRegionOf(const NDArray& whole, const Region& region);

// The block of `grid` whose region is exactly `region`, if there is one.
std::optional<Shape> ExactBlock(const ChunkGrid& grid, const Region& region);

}  // namespace tessera::planner
