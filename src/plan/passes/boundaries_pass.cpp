// boundaries: what is stored without fusion (passes.hpp).
#include "passes.hpp"

namespace tessera {

void BoundariesPass(PlanContext& context) {
  context.logical.boundary = ChooseBoundaries(context.logical, /*fuse=*/false);
}

}  // namespace tessera
