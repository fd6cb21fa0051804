#include "test_seed.hpp"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <random>
#include <string>

namespace tessera::testing {

std::uint64_t TestSeed() {
  static std::once_flag once;
  static std::uint64_t seed = 0;
  std::call_once(once, [] {
    if (const char* text = std::getenv("TESSERA_TEST_SEED"); text != nullptr && *text != 0) {
      seed = std::stoull(text);
    } else {
      seed = (static_cast<std::uint64_t>(std::random_device{}()) << 32) | std::random_device{}();
    }
    std::fprintf(stderr, "TESSERA_TEST_SEED=%llu\n", static_cast<unsigned long long>(seed));
  });
  return seed;
}

}  // namespace tessera::testing
