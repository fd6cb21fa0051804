// Compiled as the core layer: a header of core itself is visible.
#include "tessera/core/shape.hpp"

namespace tessera {

Index LayerProbeSize(const Shape& shape) { return ShapeSize(shape); }

}  // namespace tessera
