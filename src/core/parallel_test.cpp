#include "tessera/core/parallel.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
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
  // Each item takes 100 us, so running all of them would take 0.5 s per thread; the
  // error must stop the rest long before, even on a loaded machine.
  constexpr std::int64_t kItems = 20000;
  std::atomic<int> started{0};
  EXPECT_THROW(ParallelFor(kItems, 4,
                           [&](std::int64_t item) {
                             ++started;
                             if (item == 10) throw std::runtime_error("boom");
                             std::this_thread::sleep_for(std::chrono::microseconds(100));
                           }),
               std::runtime_error);
  EXPECT_LT(started.load(), kItems / 2);
}

TEST(ParallelFor, HardwareThreadsIsPositive) { EXPECT_GE(HardwareThreads(), 1); }

}  // namespace
}  // namespace tessera
