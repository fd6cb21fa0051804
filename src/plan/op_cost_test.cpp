// Memory sizes and costs of ops, checked against figures computed by hand.
#include "op_cost.hpp"

#include <gtest/gtest.h>

#include <string>

#include "tessera/core/errors.hpp"

namespace tessera::planner {
namespace {

Spec TieredSpec() {
  Spec spec;
  spec.allowed_mem = 2'000'000'000;
  spec.reserved_mem = 10'000'000;
  spec.memory_tiers = {512'000'000, 1'000'000'000, 2'000'000'000};
  return spec;
}

OpInfo OpOf(std::int64_t estimated_mem, std::int64_t tasks) {
  OpInfo info;
  info.name = "add-1";
  info.kind = OpKind::kElementwise;
  info.num_tasks = tasks;
  info.projected_mem = estimated_mem;
  info.estimated_mem = estimated_mem;
  return info;
}

TEST(OpCost, EachOpGetsTheSmallestTierThatHoldsItsTasks) {
  const Spec spec = TieredSpec();
  OpInfo small = OpOf(100'000'000, 4);
  AssignMemorySize(small, spec);
  EXPECT_EQ(small.memory_size, 512'000'000);
  OpInfo exact = OpOf(512'000'000, 4);
  AssignMemorySize(exact, spec);
  EXPECT_EQ(exact.memory_size, 512'000'000);
  OpInfo above = OpOf(512'000'001, 4);
  AssignMemorySize(above, spec);
  EXPECT_EQ(above.memory_size, 1'000'000'000);
  // History's larger estimate decides, not the projection.
  OpInfo learned = OpOf(100'000'000, 4);
  learned.estimated_mem = 1'200'000'000;
  AssignMemorySize(learned, spec);
  EXPECT_EQ(learned.memory_size, 2'000'000'000);
  // Without tiers every op is given allowed_mem.
  Spec untiered = spec;
  untiered.memory_tiers.clear();
  OpInfo plain = OpOf(100'000'000, 4);
  AssignMemorySize(plain, untiered);
  EXPECT_EQ(plain.memory_size, 2'000'000'000);
}

TEST(OpCost, AnOpAboveTheLargestTierIsRefusedByName) {
  OpInfo huge = OpOf(2'500'000'000, 1);
  try {
    AssignMemorySize(huge, TieredSpec());
    FAIL() << "assigned a tier to a 2.5 GB task";
  } catch (const MemoryBudgetError& error) {
    EXPECT_NE(std::string(error.what())
                  .find("op \"add-1\" (elementwise) needs 2.5 GB per task (reserved_mem "
                        "included), more than the largest memory tier (2.0 GB)"),
              std::string::npos)
        << error.what();
  }
}

TEST(OpCost, TaskSecondsComeFromHistoryElseFromTheBytesMoved) {
  const Spec spec = TieredSpec();
  OpInfo info = OpOf(60'000'000, 4);
  info.bytes_read = 300'000'000;
  info.bytes_written = 100'000'000;
  // Model: 100 MB moved per task > 50 MB held (60 MB - reserved), at 200 MB/s.
  EstimateTaskSeconds(info, spec, std::nullopt);
  EXPECT_FALSE(info.task_seconds_from_history);
  EXPECT_DOUBLE_EQ(info.task_seconds, 0.5);
  AssignMemorySize(info, spec);
  EXPECT_DOUBLE_EQ(info.cost_gb_seconds, 0.512 * 0.5 * 4);

  // A task that holds more than it moves is modeled by what it holds.
  OpInfo holder = OpOf(410'000'000, 2);
  holder.bytes_read = 20'000'000;
  EstimateTaskSeconds(holder, spec, std::nullopt);
  EXPECT_DOUBLE_EQ(holder.task_seconds, 2.0);  // 400 MB at 200 MB/s

  LearnedFootprint learned;
  learned.task_seconds = 1.25;
  learned.seconds_run_id = 7;
  EstimateTaskSeconds(info, spec, learned);
  EXPECT_TRUE(info.task_seconds_from_history);
  EXPECT_DOUBLE_EQ(info.task_seconds, 1.25);
  AssignMemorySize(info, spec);
  EXPECT_DOUBLE_EQ(info.cost_gb_seconds, 0.512 * 1.25 * 4);
}

}  // namespace
}  // namespace tessera::planner
