// Reductions (WIP, issue 5): axes and result dtypes as numpy has them.
#include "tessera/api/reduction.hpp"

#include <gtest/gtest.h>

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

// numpy: np.sum(np.int8(1)).dtype == int64, np.sum(np.uint16(1)).dtype == uint64,
// np.sum(True).dtype == int64, np.mean(np.int32(1)).dtype == float64,
// np.mean(np.float32(1)).dtype == float32, np.argmax(...).dtype == int64.
TEST(ReductionResultTypeTest, FollowsNumpy) {
  EXPECT_EQ(ReductionResultType(ReductionOp::kSum, int8, std::nullopt), int64);
  EXPECT_EQ(ReductionResultType(ReductionOp::kSum, bool_, std::nullopt), int64);
  EXPECT_EQ(ReductionResultType(ReductionOp::kProd, uint16, std::nullopt), uint64);
  EXPECT_EQ(ReductionResultType(ReductionOp::kSum, float32, std::nullopt), float32);
  EXPECT_EQ(ReductionResultType(ReductionOp::kMean, int32, std::nullopt), float64);
  EXPECT_EQ(ReductionResultType(ReductionOp::kVar, float32, std::nullopt), float32);
  EXPECT_EQ(ReductionResultType(ReductionOp::kMax, uint8, std::nullopt), uint8);
  EXPECT_EQ(ReductionResultType(ReductionOp::kArgMin, float64, std::nullopt), int64);
  EXPECT_EQ(ReductionResultType(ReductionOp::kAny, float64, std::nullopt), bool_);
  EXPECT_EQ(ReductionResultType(ReductionOp::kCountNonzero, int16, std::nullopt), int64);
  EXPECT_EQ(ReductionResultType(ReductionOp::kSum, int8, int16), int16);
  EXPECT_THROW(ReductionResultType(ReductionOp::kMean, int8, int64), InvalidArgument);
  EXPECT_THROW(ReductionResultType(ReductionOp::kMax, int8, int64), InvalidArgument);
}

}  // namespace
}  // namespace tessera
