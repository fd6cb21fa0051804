// Whether this build runs under AddressSanitizer (core's kBuiltWithAddressSanitizer),
// whose shadow memory and quarantine make a task touch more fresh pages than it
// allocates (tests of measured memory widen their bounds by kFreshPageFactor there).
#pragma once

#include "tessera/core/memory_account.hpp"

namespace tessera::testing {

inline constexpr bool kAddressSanitizer = kBuiltWithAddressSanitizer;

// Fresh pages touched per byte a task allocates and writes: 1 natively; under ASan the
// shadow (1/8) and its redzones and bookkeeping add about a third (measured: 40 MiB
// touched faults 50-52 MiB).
inline constexpr double kFreshPageFactor = kAddressSanitizer ? 1.5 : 1.0;

}  // namespace tessera::testing
