// prune: the logical plan of the requested outputs (passes.hpp).
#include "passes.hpp"

namespace tessera::planner {

void PrunePass(PlanContext& context) { context.logical = MakeLogicalPlan(context.requested); }

}  // namespace tessera::planner
