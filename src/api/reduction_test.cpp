// Reductions: axes and result dtypes as numpy has them, values against hand-computed
// truth, the rounds allowed_mem makes. (numpy itself checks random cases in
// tests/interop/test_reduce.py.)
#include "tessera/api/reduction.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
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
    if (op.kind == "reduce") ++rounds;
  }
  EXPECT_GT(rounds, 1) << plan.summary();
  std::cout << plan.summary();
  const NDArray result = total.compute(Quiet());
  ASSERT_EQ(result.shape(), Shape{10});
  ASSERT_EQ(result.dtype(), uint64);
  for (const std::uint64_t v : result.data<std::uint64_t>()) EXPECT_EQ(v, 100u);
}

}  // namespace
}  // namespace tessera
