// The blocks of a chunk grid that a region touches, one of each kind.
//
//   for (const Shape& block : DistinctTouchedBlocks(grid, region)) {
//     peak = std::max(peak, ScratchFor(grid.BlockShape(block)));  // as over every block
//   }
//
// Along each dimension, every block strictly between the first and the last a region
// touches is a whole chunk wholly inside the region; so the first, the second and the
// last touched stand for all of them. A maximum over the touched blocks of anything
// that depends only on a block's shape and the part of it inside the region is the
// maximum over these: planning that visits them costs the same for a region of three
// blocks and of a million. Pure functions: thread-safe.
#pragma once

#include <vector>

#include "tessera/core/chunk_grid.hpp"

namespace tessera {

// In C order: at most 3^ndim blocks (never more than the region touches); none when
// the region is empty. REQUIRES: `region` lies inside the grid's shape.
std::vector<Shape> DistinctTouchedBlocks(const ChunkGrid& grid, const Region& region);

}  // namespace tessera
