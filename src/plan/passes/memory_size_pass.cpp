// memory_sizes: every op's memory size and cost (passes.hpp).
#include "op_cost.hpp"
#include "passes.hpp"

namespace tessera::planner {

void MemorySizePass(PlanContext& context) {
  for (PlannedOp& planned : context.state->ops)
    AssignMemorySize(planned.mutable_info(), context.spec);
}

}  // namespace tessera::planner
