#include "output_op.hpp"

#include "representative_tasks.hpp"

namespace tessera::planner {

std::int64_t OutputOp::LargestProjection(const ChunkGrid& tasks,
                                         const std::vector<std::vector<Index>>& extra,
                                         std::int64_t* worst_task) const {
  std::int64_t largest = 0;
  std::int64_t worst = 0;
  ForRepresentativeTasks(tasks, extra, [&](Index task) {
    const std::int64_t projected = projected_mem(task);
    if (projected > largest) {
      largest = projected;
      worst = task;
    }
  });
  if (worst_task != nullptr) *worst_task = worst;
  return largest;
}

}  // namespace tessera::planner
