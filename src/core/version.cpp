#include "tessera/version.hpp"

namespace tessera {

const char* version() { return TESSERA_VERSION; }

}  // namespace tessera
