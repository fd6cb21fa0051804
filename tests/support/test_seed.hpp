// Replayable randomness for property tests.
//
// TestSeed() returns TESSERA_TEST_SEED from the environment when set, otherwise a
// fresh seed; either way it prints "TESSERA_TEST_SEED=<n>" once, so a failing run
// can be replayed exactly: TESSERA_TEST_SEED=<n> ctest -R <test>.
#pragma once

#include <cstdint>

namespace tessera::testing {

std::uint64_t TestSeed();

}  // namespace tessera::testing
