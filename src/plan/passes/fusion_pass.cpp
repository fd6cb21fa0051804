// fusion: store only what must be stored (passes.hpp).
#include "passes.hpp"

namespace tessera::planner {

void FusionPass(PlanContext& context) {
  context.logical.boundary = ChooseBoundaries(context.logical, /*fuse=*/true);
}

}  // namespace tessera::planner
