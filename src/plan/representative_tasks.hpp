// The tasks whose projections stand for all of an op's tasks. Internal to src/plan.
#pragma once

#include <functional>
#include <vector>

#include "tessera/core/chunk_grid.hpp"

namespace tessera::planner {

// Calls fn(task) for every task of `tasks` (one per block, C order) when there are at
// most 4096; otherwise for every combination of, per dimension, the first, second,
// last-but-one and last block and the indices in `extra[d]` (when given): the edges and
// whatever else the op knows to be a worst case.
void ForRepresentativeTasks(const ChunkGrid& tasks, const std::vector<std::vector<Index>>& extra,
                            const std::function<void(Index)>& fn);

}  // namespace tessera::planner
