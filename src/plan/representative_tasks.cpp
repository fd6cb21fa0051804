#include "representative_tasks.hpp"

#include <algorithm>
#include <set>

namespace tessera::planner {

void ForRepresentativeTasks(const ChunkGrid& tasks, const std::vector<std::vector<Index>>& extra,
                            const std::function<void(Index)>& fn) {
  constexpr Index kExhaustive = 4096;
  const Index count = tasks.num_blocks();
  if (count <= kExhaustive) {
    for (Index task = 0; task < count; ++task) fn(task);
    return;
  }
  const Shape& blocks = tasks.grid_shape();
  std::vector<std::vector<Index>> choices;
  for (std::size_t d = 0; d < blocks.size(); ++d) {
    const Index along = blocks[d];
    std::set<Index> picks{0, std::min<Index>(1, along - 1), std::max<Index>(along - 2, 0),
                          along - 1};
    if (d < extra.size()) {
      for (const Index pick : extra[d]) {
        if (pick >= 0 && pick < along) picks.insert(pick);
      }
    }
    choices.emplace_back(picks.begin(), picks.end());
  }
  Shape pick(blocks.size(), 0);
  Shape block(blocks.size());
  while (true) {
    for (std::size_t d = 0; d < blocks.size(); ++d) {
      block[d] = choices[d][static_cast<std::size_t>(pick[d])];
    }
    fn(tasks.LinearIndex(block));
    std::size_t d = blocks.size();
    while (d > 0) {
      --d;
      if (++pick[d] < static_cast<Index>(choices[d].size())) break;
      pick[d] = 0;
      if (d == 0) return;
    }
  }
}

}  // namespace tessera::planner
