// Planning cost does not grow with the number of chunks (issue 14): a crafted array of
// 2^50 x 80 elements in (10, 20) chunks (4.5 x 10^14 of them) plans as an array of ten
// chunks does, whether it is made by ones() or read from a .zarray. The plans are not
// run; their task counts are checked against numbers worked out by hand. A watchdog
// aborts the test (rather than hang it) if planning has not finished in two minutes.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <thread>

#include "temp_dir.hpp"
#include "tessera/api/array.hpp"
#include "tessera/api/creation.hpp"
#include "tessera/api/elementwise.hpp"
#include "tessera/api/reduction.hpp"

namespace tessera {
namespace {

constexpr Index kRows = Index{1} << 50;

// Aborts the process when not destroyed within `limit`: generous, for a loaded machine;
// a planner walking every chunk would take days.
class Watchdog {
 public:
  explicit Watchdog(std::chrono::seconds limit)
      : thread_([this, limit] {
          std::unique_lock lock(mutex_);
          if (!done_cv_.wait_for(lock, limit, [this] { return done_; })) {
            std::fprintf(stderr, "planning a 2^50-row array did not finish in %lld s\n",
                         static_cast<long long>(limit.count()));
            std::abort();
          }
        }) {}
  ~Watchdog() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    done_cv_.notify_one();
    thread_.join();
  }

 private:
  std::mutex mutex_;
  std::condition_variable done_cv_;
  bool done_ = false;
  std::thread thread_;
};

Spec HugeSpec() {
  Spec spec;
  spec.allowed_mem = 100'000'000;
  spec.max_workers = 2;
  return spec;
}

Index Blocks(Index extent, Index chunk) { return (extent + chunk - 1) / chunk; }

Index TotalTasks(const FinalizedPlan& plan) {
  Index total = 0;
  for (const OpInfo& op : plan.ops()) total += op.num_tasks;
  return total;
}

TEST(HugePlanTest, OnesOfTwoToTheFiftyRowsPlansWithoutWalkingItsChunks) {
  const Watchdog watchdog(std::chrono::seconds(120));
  const Array x = ones({kRows, 80}, float64, {10, 20}, HugeSpec());
  const FinalizedPlan elementwise = (x + 1.0).plan();
  ASSERT_EQ(elementwise.ops().size(), 1u) << elementwise.summary();
  EXPECT_EQ(elementwise.ops()[0].num_tasks, Blocks(kRows, 10) * 4);

  // A generator rechunked is generated in the new chunks: a task per (20, 10) chunk (the
  // last row of chunks holds 4 rows: 2^50 = 20q + 4). Read from a store, it is a copy
  // (tests/cli/test_huge_plans.py).
  const FinalizedPlan rechunk = x.rechunk({20, 10}).plan();
  EXPECT_EQ(TotalTasks(rechunk), Blocks(kRows, 20) * 8) << rechunk.summary();
  EXPECT_LE(rechunk.max_projected_mem(), HugeSpec().allowed_mem);

  const FinalizedPlan reduced = sum(x, {0}).plan();
  EXPECT_GT(TotalTasks(reduced), 0);
  EXPECT_LE(reduced.max_projected_mem(), HugeSpec().allowed_mem);
}

TEST(HugePlanTest, AZarrayOfTwoToTheFiftyRowsPlansWithoutWalkingItsChunks) {
  const Watchdog watchdog(std::chrono::seconds(120));
  testing::TempDir dir;
  const auto path = dir.path() / "huge.zarr";
  std::filesystem::create_directories(path);
  std::ofstream(path / ".zarray")
      << R"({"zarr_format": 2, "shape": [1125899906842624, 80], "chunks": [10, 20], )"
      << R"("dtype": "<f8", "compressor": null, "fill_value": 0.0, "order": "C", )"
      << R"("filters": null})";
  const Array x = from_zarr(path.string(), HugeSpec());
  ASSERT_EQ(x.shape(), (Shape{kRows, 80}));
  const FinalizedPlan copied = (x * 2.0).plan_to_zarr((dir.path() / "out.zarr").string());
  ASSERT_EQ(copied.ops().size(), 1u) << copied.summary();
  EXPECT_EQ(copied.ops()[0].num_tasks, Blocks(kRows, 10) * 4);
  const FinalizedPlan rechunk = x.rechunk({100000, 1}).plan();
  EXPECT_GT(TotalTasks(rechunk), 0);
  EXPECT_LE(rechunk.max_projected_mem(), HugeSpec().allowed_mem);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "out.zarr"));  // planning writes nothing
}

}  // namespace
}  // namespace tessera
