// Reduction result dtypes as numpy has them.
#include "tessera/plan/reduction.hpp"

#include <gtest/gtest.h>

#include "tessera/core/errors.hpp"

namespace tessera::planner {
namespace {

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
}  // namespace tessera::planner
