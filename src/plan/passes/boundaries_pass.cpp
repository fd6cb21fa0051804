// boundaries: what is stored without fusion (passes.hpp).
#include "passes.hpp"

namespace tessera::planner {

void BoundariesPass(PlanContext& context) {
  context.logical.boundary = ChooseBoundaries(context.logical, /*fuse=*/false);
}

}  // namespace tessera::planner
