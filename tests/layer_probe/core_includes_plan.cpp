// Compiled as the core layer: plan is above core, so this include must not compile
// (the layer_probe_upward_include ctests). The same code with a core header compiles
// (core_includes_core.cpp).
#include "tessera/plan/finalized_plan.hpp"

namespace tessera {

Index LayerProbeSize(const Shape& shape) { return ShapeSize(shape); }

}  // namespace tessera
