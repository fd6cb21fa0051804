#include "tessera/core/parallel.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

namespace tessera {
namespace {

TEST(ParallelFor, RunsEveryItemExactlyOnce) {
  for (int threads : {1, 2, 4, 16}) {
    std::vector<std::atomic<int>> hits(1000);
    ParallelFor(1000, threads, [&](std::int64_t item) { ++hits[static_cast<std::size_t>(item)]; });
    for (auto& hit : hits) ASSERT_EQ(hit.load(), 1);
  }
  ParallelFor(0, 4, [](std::int64_t) { FAIL(); });
}

TEST(ParallelFor, FirstErrorIsRethrownAndStopsNewItems) {
  std::atomic<int> started{0};
  EXPECT_THROW(ParallelFor(100000, 4,
                           [&](std::int64_t item) {
                             ++started;
                             if (item == 10) throw std::runtime_error("boom");
                           }),
               std::runtime_error);
  EXPECT_LT(started.load(), 100000);
}

TEST(ParallelFor, HardwareThreadsIsPositive) { EXPECT_GE(HardwareThreads(), 1); }

}  // namespace
}  // namespace tessera
