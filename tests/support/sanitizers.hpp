// Whether this build runs under AddressSanitizer, whose shadow memory and quarantine
// make a task touch more fresh pages than it allocates (tests of measured memory widen
// their bounds by kFreshPageFactor there).
#pragma once

namespace tessera::testing {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

// Fresh pages touched per byte a task allocates and writes: 1 natively; under ASan the
// shadow (1/8) and its redzones and bookkeeping add about a third (measured: 40 MiB
// touched faults 50-52 MiB).
inline constexpr double kFreshPageFactor = kAddressSanitizer ? 1.5 : 1.0;

}  // namespace tessera::testing
