// Compiled as storage's codecs sub-layer: the Zarr format is above the codecs (codecs <
// stores < zarr), so this include must not compile (layer_probe_storage_sublayers).
#include "tessera/storage/zarr_metadata.hpp"

namespace tessera {

Index LayerProbeSize(const Shape& shape) { return ShapeSize(shape); }

}  // namespace tessera
