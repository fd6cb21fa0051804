// Walking the chunks a region of an array touches: which blocks, which part of each,
// and where that part lands in the region. Used for arrays (chunks of the grid) and
// for shards (inner chunks of a shard).
//
//   const TouchedRange range = TouchedBlocks(grid, region);
//   for (Index linear = 0; linear < ShapeSize(range.counts); ++linear) {
//     const TouchedBox touched = TouchedBoxAt(grid, region, range, linear);
//     // touched.block, touched.box (chunk coordinates), touched.out_start (in region)
//   }
//
// Internal to src/storage/zarr. Pure functions: thread-safe.
#pragma once

#include <span>

#include "tessera/core/chunk_grid.hpp"

namespace tessera::zarr_detail {

// The blocks a region touches: first + [0, counts) per dimension.
struct TouchedRange {
  Shape first;
  Shape counts;
};

// One block a region touches: the block, the part of it inside the region (block
// coordinates), and where that part starts in the region.
struct TouchedBox {
  Shape block;
  Region box;
  Shape out_start;
};

// REQUIRES: `region` lies inside the grid's shape and is not empty.
TouchedRange TouchedBlocks(const ChunkGrid& grid, const Region& region);
// The `linear`-th (C order) block of `range`.
TouchedBox TouchedBoxAt(const ChunkGrid& grid, const Region& region, const TouchedRange& range,
                        Index linear);
// The same for `block`, one of the blocks `region` touches.
TouchedBox TouchedBoxOf(const ChunkGrid& grid, const Region& region, Shape block);

// Byte offset of `position` given per-dimension byte strides.
Index ByteOffset(std::span<const Index> position, std::span<const Index> byte_strides);

}  // namespace tessera::zarr_detail
