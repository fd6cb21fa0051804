// Reductions: axes and result dtypes as numpy has them, values against hand-computed
// truth, the rounds allowed_mem makes. (numpy itself checks random cases in
// tests/interop/test_reduce.py.)
#include "tessera/api/reduction.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tessera/api/creation.hpp"
#include "tessera/api/elementwise.hpp"
#include "tessera/core/errors.hpp"

namespace tessera {
namespace {

TEST(AxesTest, ResolvesLikeNumpy) {
  EXPECT_EQ(Axes().Resolve(3), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(Axes(-1).Resolve(3), (std::vector<int>{2}));
  EXPECT_EQ(Axes({2, 0}).Resolve(3), (std::vector<int>{0, 2}));
  EXPECT_TRUE(Axes().Resolve(0).empty());
  EXPECT_THROW(Axes(3).Resolve(3), InvalidArgument);
  EXPECT_THROW(Axes(-4).Resolve(3), InvalidArgument);
  EXPECT_THROW(Axes({1, -2}).Resolve(3), InvalidArgument);  // the same axis twice
}

// Building a reduction is lazy: shape, chunks and dtype as numpy's result would have.
TEST(ReductionTest, BuildsLazyArraysOfTheRightShape) {
  Spec spec;
  spec.allowed_mem = 1 << 20;
  const Array x = ones({4, 6, 8}, int16, {2, 3, 4}, spec);
  const Array s = sum(x, 1);
  EXPECT_EQ(s.shape(), (Shape{4, 8}));
  EXPECT_EQ(s.chunks(), (Shape{2, 4}));
  EXPECT_EQ(s.dtype(), int64);
  const Array m = mean(x, {0, 2}, /*keepdims=*/true);
  EXPECT_EQ(m.shape(), (Shape{1, 6, 1}));
  EXPECT_EQ(m.dtype(), float64);
  EXPECT_EQ(max(x).shape(), Shape{});
  EXPECT_EQ(argmax(x, -1).shape(), (Shape{4, 6}));
  EXPECT_EQ(argmax(x, -1).dtype(), int64);
  EXPECT_EQ(any(x, 0).dtype(), bool_);
  EXPECT_THROW(sum(x, 3), InvalidArgument);
  EXPECT_THROW(mean(x, 0, false, int32), InvalidArgument);
}

Spec SpecOf(std::int64_t allowed_mem) {
  Spec spec;
  spec.allowed_mem = allowed_mem;
  spec.max_workers = 2;
  return spec;
}

ComputeOptions Quiet() {
  ComputeOptions options;
  options.execute.progress = ProgressMode::kNever;
  return options;
}

// The case: 100 blocks of 10 bytes under allowed_mem 1000 take several rounds,
// each task within the budget.
TEST(ReductionTest, SmallBudgetTakesSeveralRounds) {
  const Array x = ones({100, 10}, uint8, {1, 10}, SpecOf(1000));
  const Array total = sum(x, 0);
  const FinalizedPlan plan = total.plan();
  EXPECT_LE(plan.max_projected_mem(), 1000);
  int rounds = 0;
  for (const OpInfo& op : plan.ops()) {
    if (op.kind == OpKind::kReduce) ++rounds;
  }
  EXPECT_GT(rounds, 1) << plan.summary();
  // docs/memory-model.md, "Reductions": 8 tasks of 13 rows, each streaming its rows one
  // at a time (a 10 B row + 80 B of states + 80 B of the row's states), then one task
  // combining the 8 partials (640 B read + 80 B of states).
  ASSERT_EQ(plan.ops().size(), 2u) << plan.summary();
  EXPECT_EQ(plan.ops()[0].num_tasks, 8);
  EXPECT_EQ(plan.ops()[0].projected_mem, 10 + 80 + 80);
  EXPECT_EQ(plan.ops()[1].num_tasks, 1);
  EXPECT_EQ(plan.ops()[1].projected_mem, 640 + 80);
  const std::string summary = plan.summary();
  EXPECT_NE(summary.find("Reduction sum-"), std::string::npos) << summary;
  EXPECT_NE(summary.find("reduces up to 13 blocks of its input per task, one at a time, in 8 "
                         "tasks of at most 170 B"),
            std::string::npos)
      << summary;
  EXPECT_NE(summary.find("combines up to 8 partial results per task, in 1 task of at most 720 B"),
            std::string::npos)
      << summary;
  const NDArray result = total.compute(Quiet());
  ASSERT_EQ(result.shape(), Shape{10});
  ASSERT_EQ(result.dtype(), uint64);
  for (const std::uint64_t v : result.data<std::uint64_t>()) EXPECT_EQ(v, 100u);
}

// A budget that holds only a few partial results per task: rounds follow from it (the
// number of blocks per task is the largest that fits), every task within it.
TEST(ReductionTest, RoundsFollowFromTheBudget) {
  const auto x = [](std::int64_t allowed) { return arange(0, 1000, 1, int32, 1, SpecOf(allowed)); };
  const auto rounds_under = [&](std::int64_t allowed) {
    const FinalizedPlan plan = sum(x(allowed)).plan();
    EXPECT_LE(plan.max_projected_mem(), allowed);
    int rounds = 0;
    for (const OpInfo& op : plan.ops()) rounds += op.kind == OpKind::kReduce ? 1 : 0;
    return rounds;
  };
  const int generous = rounds_under(1 << 20);
  const int tight = rounds_under(48);
  EXPECT_GE(tight, 3);
  EXPECT_LT(generous, tight);
  EXPECT_EQ(sum(x(48)).compute(Quiet()).data<std::int64_t>()[0], 999 * 1000 / 2);
}

// var and std from partial moments (Chan's combination) across blocks and rounds,
// against the two-pass formula on the same values.
TEST(ReductionTest, MomentsCombineAcrossBlocks) {
  std::vector<double> values;
  for (int i = 0; i < 60; ++i) values.push_back(1e6 + std::sin(i) * 3.0 + (i % 7));
  NDArray data = NDArray::FromValues<double>({6, 10}, values);
  const Array x = asarray(data, {1, 3}, SpecOf(400));
  for (const double correction : {0.0, 1.0}) {
    const NDArray v = var(x, 0, false, correction).compute(Quiet());
    const NDArray s = tessera::std(x, 1, true, correction).compute(Quiet());
    ASSERT_EQ(s.shape(), (Shape{6, 1}));
    for (int col = 0; col < 10; ++col) {
      double mean = 0;
      for (int row = 0; row < 6; ++row) mean += values[static_cast<std::size_t>(row * 10 + col)];
      mean /= 6;
      double m2 = 0;
      for (int row = 0; row < 6; ++row) {
        const double d = values[static_cast<std::size_t>(row * 10 + col)] - mean;
        m2 += d * d;
      }
      EXPECT_NEAR(v.data<double>()[static_cast<std::size_t>(col)], m2 / (6 - correction), 1e-6);
    }
    for (int row = 0; row < 6; ++row) {
      double mean = 0;
      for (int col = 0; col < 10; ++col) mean += values[static_cast<std::size_t>(row * 10 + col)];
      mean /= 10;
      double m2 = 0;
      for (int col = 0; col < 10; ++col) {
        const double d = values[static_cast<std::size_t>(row * 10 + col)] - mean;
        m2 += d * d;
      }
      EXPECT_NEAR(s.data<double>()[static_cast<std::size_t>(row)],
                  std::sqrt(m2 / (10 - correction)), 1e-9);
    }
  }
}

// argmin/argmax: the first extreme across blocks (ties to the smaller index), the first
// NaN when there is one; indices into the flattened array without an axis.
TEST(ReductionTest, ArgExtremesTakeTheFirstOccurrence) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  NDArray data = NDArray::FromValues<double>(
      {3, 4}, std::vector<double>{5, 1, 7, 1, 7, 0, 7, nan, 2, 0, 3, nan});
  const Array x = asarray(data, {2, 1}, SpecOf(1 << 20));
  EXPECT_EQ(argmax(x).compute(Quiet()).data<std::int64_t>()[0], 7);  // the first NaN
  const NDArray by_row = argmin(x, 1).compute(Quiet());
  EXPECT_EQ(by_row.data<std::int64_t>()[0], 1);  // 1 at columns 1 and 3
  EXPECT_EQ(by_row.data<std::int64_t>()[1], 3);  // NaN
  EXPECT_EQ(by_row.data<std::int64_t>()[2], 3);
  const NDArray by_column = argmax(x, 0).compute(Quiet());
  EXPECT_EQ(by_column.data<std::int64_t>()[0], 1);
  EXPECT_EQ(by_column.data<std::int64_t>()[2], 0);  // 7 at rows 0 and 1
  EXPECT_EQ(by_column.data<std::int64_t>()[3], 1);  // NaN
}

// Empty reductions as numpy: identities for sum/prod/all/any/count_nonzero, NaN for the
// mean; min/max/argmin/argmax refuse when they would have to produce values.
TEST(ReductionTest, EmptyReductionsAsNumpy) {
  const Array x = zeros({0, 3}, float32, {1, 2}, SpecOf(1 << 20));
  const NDArray s = sum(x, 0).compute(Quiet());
  ASSERT_EQ(s.shape(), Shape{3});
  for (const float v : s.data<float>()) EXPECT_EQ(v, 0.0f);
  const NDArray m = mean(x, 0).compute(Quiet());
  for (const float v : m.data<float>()) EXPECT_TRUE(std::isnan(v));
  EXPECT_EQ(prod(x).compute(Quiet()).data<float>()[0], 1.0f);
  EXPECT_TRUE(all(x).compute(Quiet()).data<bool>()[0]);
  EXPECT_FALSE(any(x).compute(Quiet()).data<bool>()[0]);
  EXPECT_EQ(count_nonzero(x).compute(Quiet()).data<std::int64_t>()[0], 0);
  EXPECT_EQ(max(x, 1).compute(Quiet()).shape(), Shape{0});  // nothing to produce
  try {
    (void)max(x, 0);
    FAIL() << "max over an empty axis must be refused";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("has no identity"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)argmin(x), InvalidArgument);
}

// Integer sums wrap as numpy's (int64 accumulation); a requested dtype casts first.
TEST(ReductionTest, IntegerSumsWrapAndRequestedDtypesCastFirst) {
  const Array big = full({4}, Scalar(std::int64_t{1} << 62), int64, {1}, SpecOf(1 << 20));
  EXPECT_EQ(sum(big).compute(Quiet()).data<std::int64_t>()[0], 0);  // 4 * 2^62 wraps to 0
  const Array bytes = full({3}, Scalar(std::int64_t{200}), uint8, {2}, SpecOf(1 << 20));
  EXPECT_EQ(sum(bytes).compute(Quiet()).data<std::uint64_t>()[0], 600u);
  EXPECT_EQ(sum(bytes, {}, false, uint8).compute(Quiet()).data<std::uint8_t>()[0], 600 % 256);
  const Array flags = full({5}, Scalar(true), bool_, {2}, SpecOf(1 << 20));
  EXPECT_EQ(sum(flags).compute(Quiet()).data<std::int64_t>()[0], 5);
}

// A budget below one block's needs is refused at plan time, naming an allowed_mem under
// which the whole reduction then plans and runs.
TEST(ReductionTest, RefusalNamesABudgetThatRuns) {
  const Array x = ones({40, 30}, float64, {10, 30}, SpecOf(1000));
  try {
    (void)mean(x, 0).plan();
    FAIL() << "a 2400-byte block cannot fit in 1000 bytes";
  } catch (const MemoryBudgetError& e) {
    const std::string what = e.what();
    const std::string marker = "the smallest allowed_mem that would run it is ";
    const std::size_t at = what.find(marker);
    ASSERT_NE(at, std::string::npos) << what;
    const std::int64_t needed = std::stoll(what.substr(at + marker.size()));
    EXPECT_GT(needed, 2400);
    const Array y = ones({40, 30}, float64, {10, 30}, SpecOf(needed));
    const NDArray m = mean(y, 0).compute(Quiet());
    for (const double v : m.data<double>()) EXPECT_EQ(v, 1.0);
  }
}

// The climatologist's pipeline: a mean over time, the anomaly against it (a broadcast),
// the anomaly's spread — a reduction feeding an elementwise op feeding a reduction —
// against the same formulas computed here.
TEST(ReductionTest, AnomalyOfAClimatology) {
  const Spec spec = SpecOf(1 << 20);
  const Array x = random::random({20, 6, 5}, {4, 3, 5}, spec, 11);
  const NDArray values = x.compute(Quiet());
  const Array climatology = mean(x, 0);
  const Array spread = tessera::std(x - climatology, 0, false, 1);
  const NDArray result = spread.compute(Quiet());
  ASSERT_EQ(result.shape(), (Shape{6, 5}));
  const auto v = values.data<double>();
  for (std::size_t cell = 0; cell < 30; ++cell) {
    double mean_value = 0;
    for (std::size_t t = 0; t < 20; ++t) mean_value += v[t * 30 + cell];
    mean_value /= 20;
    double m2 = 0;
    for (std::size_t t = 0; t < 20; ++t) {
      const double d = v[t * 30 + cell] - mean_value;
      m2 += d * d;
    }
    EXPECT_NEAR(result.data<double>()[cell], std::sqrt(m2 / 19), 1e-12);
  }
}

// A budget too small for a reduction whose partial states go to disk is refused for
// memory, naming a budget that plans (computing that figure once read the stored
// partials with a region outside them and threw InvalidArgument instead).
TEST(ReductionTest, ABudgetTooSmallForStoredPartialsNamesOneThatPlans) {
  const Spec spec = SpecOf(4 << 10);
  const Array x = ones({250, 130}, float32, {64, 50}, spec) * 3.0f;
  PlanOptions disk;
  disk.intermediate_tier = Tier::kDisk;
  const Array spread = var(x, 1, false, 1);
  std::int64_t named = 0;
  try {
    spread.plan(disk);
    FAIL() << "planned under 4 kB";
  } catch (const MemoryBudgetError& error) {
    const std::string message = error.what();
    const std::string marker = "the smallest allowed_mem that would run it is ";
    const std::size_t at = message.find(marker);
    ASSERT_NE(at, std::string::npos) << message;
    named = std::stoll(message.substr(at + marker.size()));
  }
  const Array at_named(spread.node(), SpecOf(named));
  EXPECT_NO_THROW(at_named.plan(disk));
  ComputeOptions options = Quiet();
  options.plan = disk;
  const NDArray result = at_named.compute(options);
  for (const float v : result.data<float>()) EXPECT_EQ(v, 0.0f);
}

}  // namespace
}  // namespace tessera
