// Tessera's version.
#pragma once

namespace tessera {

// "0.1.0"
const char* version();

}  // namespace tessera
