#include "tessera/core/touched_blocks.hpp"

namespace tessera {

std::vector<Shape> DistinctTouchedBlocks(const ChunkGrid& grid, const Region& region) {
  const std::size_t ndim = region.shape.size();
  // Per dimension: the touched block indices that stand for all (ascending, distinct).
  std::vector<Shape> picks(ndim);
  for (std::size_t dim = 0; dim < ndim; ++dim) {
    if (region.shape[dim] <= 0) return {};
    const Index chunk = grid.chunks()[dim];
    const Index first = region.start[dim] / chunk;
    const Index last = (region.start[dim] + region.shape[dim] - 1) / chunk;
    picks[dim].push_back(first);
    if (first + 1 < last) picks[dim].push_back(first + 1);
    if (last > first) picks[dim].push_back(last);
  }
  std::vector<Shape> blocks;
  std::vector<std::size_t> position(ndim, 0);  // into picks, per dimension
  while (true) {
    Shape block(ndim);
    for (std::size_t dim = 0; dim < ndim; ++dim) block[dim] = picks[dim][position[dim]];
    blocks.push_back(std::move(block));
    std::size_t dim = ndim;
    while (dim > 0 && ++position[dim - 1] == picks[dim - 1].size()) {
      position[--dim] = 0;
    }
    if (dim == 0) return blocks;
  }
}

}  // namespace tessera
