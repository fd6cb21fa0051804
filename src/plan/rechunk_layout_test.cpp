// Rechunk layouts: traffic counted by hand, the seed's case through RAM or disk, direct
// copies when chunks line up, the model's budget respected by every step.
#include "rechunk_layout.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "test_seed.hpp"

namespace tessera::planner {
namespace {

CopyStep Step(Shape read, Shape write, Shape task, bool decode = true) {
  CopyStep step;
  step.read_chunks = std::move(read);
  step.write_chunks = std::move(write);
  step.task_shape = std::move(task);
  step.reads_decode = decode;
  return step;
}

TEST(RechunkLayoutTest, CountsTrafficByHand) {
  // Extent 10, tasks of 4 over chunks of 3: [0,4) touches chunks 0-1 (6 elements),
  // [4,8) chunks 1-2 (6), [8,10) chunks 2-3 (3 + 1): 6 reads, 16 elements decoded.
  const CopyTraffic line = CountTraffic({10}, 8, Step({3}, {2}, {4}));
  EXPECT_EQ(line.tasks, 3);
  EXPECT_EQ(line.chunk_reads, 6);
  EXPECT_EQ(line.bytes_read, 16 * 8);
  EXPECT_EQ(line.chunk_writes, 5);
  EXPECT_EQ(line.bytes_written, 80);
  // Dimensions multiply.
  const CopyTraffic square = CountTraffic({10, 10}, 8, Step({3, 3}, {2, 2}, {4, 4}));
  EXPECT_EQ(square.tasks, 9);
  EXPECT_EQ(square.chunk_reads, 36);
  EXPECT_EQ(square.bytes_read, 256 * 8);
  EXPECT_EQ(square.chunk_writes, 25);
  // Held decoded in RAM: each element is copied once, whatever the overlap.
  EXPECT_EQ(CountTraffic({10}, 8, Step({3}, {2}, {4}, false)).bytes_read, 80);
}

// The closed form against a walk over every task, on random small cases (the walk is the
// definition); and on an extent of 2^50, where a walk would not finish.
TEST(RechunkLayoutTest, TrafficInClosedFormEqualsAWalkOverTasks) {
  std::mt19937_64 random(testing::TestSeed());
  std::uniform_int_distribution<Index> size(1, 60);
  for (int round = 0; round < 3000; ++round) {
    const Index extent = size(random) * (round % 3 == 0 ? 7 : 1);
    const Index task = size(random);
    const Index chunk = size(random);
    Index tasks = 0, touched = 0, touched_extent = 0;
    for (Index begin = 0; begin < extent; begin += task) {
      const Index end = std::min(begin + task, extent);
      const Index first = begin / chunk, last = (end - 1) / chunk;
      ++tasks;
      touched += last - first + 1;
      touched_extent += std::min((last + 1) * chunk, extent) - first * chunk;
    }
    const CopyTraffic traffic = CountTraffic({extent}, 1, Step({chunk}, {task}, {task}));
    ASSERT_EQ(traffic.tasks, tasks) << extent << " " << task << " " << chunk;
    ASSERT_EQ(traffic.chunk_reads, touched) << extent << " " << task << " " << chunk;
    ASSERT_EQ(traffic.bytes_read, touched_extent) << extent << " " << task << " " << chunk;
  }
  // 2^50 rows in tasks of 20 over chunks of 10: each task reads 2 chunks exactly.
  const Index rows = Index{1} << 50;
  const CopyTraffic huge = CountTraffic({rows, 80}, 8, Step({10, 20}, {20, 10}, {20, 10}));
  EXPECT_EQ(huge.tasks, (rows / 20 + 1) * 8);  // 2^50 = 20 q + 4: a last task of 4 rows
  EXPECT_EQ(huge.chunk_reads, (rows / 20 * 2 + 1) * 8);
}

TEST(RechunkLayoutTest, ModelCountsRegionsAndCodecBuffers) {
  CopyStep step = Step({100}, {50}, {200});
  step.num_blocks = 4;
  // Region 1600 B + decoded and stored source chunk 2 x 800 + gathered and encoded
  // target chunk 2 x 400, plus codec slack on each side (n / 128 + 256).
  EXPECT_EQ(ModelTaskBytes({200}, 8, step), 1600 + (1600 + 6 + 256) + (800 + 3 + 256));
  step.blocks_in_memory = 4;  // all of an intermediate in RAM: its blocks are kept copies
  EXPECT_EQ(ModelTaskBytes({200}, 8, step), 1600 + (1600 + 6 + 256) + 1600);
}

RechunkProblem SeedProblem(std::int64_t memory_budget) {
  RechunkProblem problem;
  problem.shape = {10000, 10000};
  problem.itemsize = 8;
  problem.source_chunks = {10000, 1000};
  problem.target_chunks = {1000, 10000};
  problem.task_budget = 400'000'000;
  problem.memory_budget = memory_budget;
  return problem;
}

TEST(RechunkLayoutTest, SeedCaseGoesThroughRamWhenItFits) {
  const RechunkProblem problem = SeedProblem(8'000'000'000);
  const std::optional<RechunkLayout> layout = PlanRechunkLayout(problem);
  ASSERT_TRUE(layout.has_value());
  EXPECT_EQ(layout->strategy, "via RAM");
  ASSERT_EQ(layout->steps.size(), 2u);
  const CopyStep& in = layout->steps[0];
  const CopyStep& out = layout->steps[1];
  // Source chunks grown along the second dimension while a task fits: 80 MB chunk
  // decoded + stored (160 MB + slack) beside a region below 240 MB -> 2000 columns.
  EXPECT_EQ(in.write_chunks, (Shape{10000, 2000}));
  EXPECT_EQ(in.task_shape, in.write_chunks);
  EXPECT_EQ(in.blocks_in_memory, in.num_blocks);
  EXPECT_EQ(CountTraffic(problem.shape, 8, in).chunk_reads, 10);  // each source chunk once
  EXPECT_FALSE(out.reads_decode);                                 // read from RAM
  EXPECT_EQ(out.task_shape, (Shape{1000, 10000}));
  for (const CopyStep& step : layout->steps) {
    EXPECT_LE(ModelTaskBytes(problem.shape, 8, step), problem.task_budget);
  }
}

TEST(RechunkLayoutTest, SeedCaseGoesToDiskWithoutRam) {
  const RechunkProblem problem = SeedProblem(0);
  const std::optional<RechunkLayout> layout = PlanRechunkLayout(problem);
  ASSERT_TRUE(layout.has_value());
  EXPECT_NE(layout->strategy, "via RAM");
  for (const CopyStep& step : layout->steps) {
    EXPECT_EQ(step.blocks_in_memory, 0);
    EXPECT_LE(ModelTaskBytes(problem.shape, 8, step), problem.task_budget);
  }
  EXPECT_TRUE(layout->steps.back().writes_target);
  EXPECT_EQ(layout->steps.back().write_chunks, (Shape{1000, 10000}));
}

TEST(RechunkLayoutTest, AlignedChunksCopyDirectly) {
  RechunkProblem problem;
  problem.shape = {1000, 1000};
  problem.itemsize = 4;
  problem.source_chunks = {100, 100};
  problem.target_chunks = {200, 200};
  problem.task_budget = 10'000'000;
  problem.memory_budget = 1'000'000'000;
  const std::optional<RechunkLayout> layout = PlanRechunkLayout(problem);
  ASSERT_TRUE(layout.has_value());
  EXPECT_EQ(layout->strategy, "direct");
  ASSERT_EQ(layout->steps.size(), 1u);
  EXPECT_EQ(CountTraffic(problem.shape, 4, layout->steps[0]).chunk_reads, 100);
}

TEST(RechunkLayoutTest, NothingFitsATinyBudget) {
  RechunkProblem problem = SeedProblem(0);
  problem.task_budget = 1'000'000;
  EXPECT_FALSE(PlanRechunkLayout(problem).has_value());
  // The smallest tasks: one chunk each, through min(source, target) chunks on disk.
  const RechunkLayout smallest = SmallestTaskLayout(problem);
  ASSERT_EQ(smallest.steps.size(), 2u);
  EXPECT_EQ(smallest.steps[0].write_chunks, (Shape{1000, 1000}));
  EXPECT_EQ(smallest.steps[0].task_shape, (Shape{1000, 1000}));
  EXPECT_EQ(smallest.steps[1].task_shape, (Shape{1000, 10000}));
}

TEST(RechunkLayoutTest, Era5FitsWithFarFewerReadsThanADirectCopy) {
  RechunkProblem problem;
  problem.shape = {350640, 721, 1440};
  problem.itemsize = 4;
  problem.source_chunks = {31, 721, 1440};
  problem.target_chunks = {350640, 10, 10};
  problem.task_budget = 2'500'000'000;
  problem.memory_budget = 0;
  const std::optional<RechunkLayout> layout = PlanRechunkLayout(problem);
  ASSERT_TRUE(layout.has_value());
  ASSERT_GE(layout->steps.size(), 2u);
  std::int64_t decoded = 0;
  for (const CopyStep& step : layout->steps) {
    EXPECT_LE(ModelTaskBytes(problem.shape, 4, step), problem.task_budget);
    decoded += CountTraffic(problem.shape, 4, step).bytes_read;
  }
  // A direct copy would decode every 128 MB source chunk once per target column it
  // touches (10,512 of them) — tens of petabytes.
  const std::int64_t nbytes = 350640LL * 721 * 1440 * 4;
  EXPECT_LT(decoded, 4 * nbytes);
}

// Less RAM than the intermediate: part of it stays in RAM, the rest on disk — not the
// whole stage on disk — and the less RAM, the more on disk.
TEST(RechunkLayoutTest, IntermediateJustAboveRamIsSplitNotSpilledWhole) {
  Index previous = 6;
  for (const std::int64_t ram : {700'000'000LL, 500'000'000LL, 300'000'000LL}) {
    const RechunkProblem problem = SeedProblem(ram);
    const std::optional<RechunkLayout> layout = PlanRechunkLayout(problem);
    ASSERT_TRUE(layout.has_value());
    const CopyStep& first = layout->steps.front();
    EXPECT_GT(first.blocks_in_memory, 0) << ram;
    EXPECT_LT(first.blocks_in_memory, first.num_blocks) << ram;
    EXPECT_LT(first.blocks_in_memory, previous) << ram;
    previous = first.blocks_in_memory;
    // What is on disk is stored in chunks that tile the blocks kept in RAM.
    for (std::size_t d = 0; d < first.write_chunks.size(); ++d) {
      EXPECT_EQ(first.write_chunks[d] % first.disk_chunks[d], 0);
    }
  }
}

}  // namespace
}  // namespace tessera::planner
