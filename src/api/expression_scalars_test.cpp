// Folding array-free parts of an expression: Python's results on bool, int64 and double.
#include "expression_scalars.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "tessera/core/errors.hpp"

namespace tessera::expression {
namespace {

TEST(ExpressionScalarsTest, ArithmeticKeepsIntegersUnlessDividing) {
  EXPECT_EQ(FoldBinary("add", Scalar(2), Scalar(3)), Scalar(std::int64_t{5}));
  EXPECT_EQ(FoldBinary("divide", Scalar(1), Scalar(4)), Scalar(0.25));
  EXPECT_EQ(FoldBinary("pow", Scalar(2), Scalar(10)), Scalar(std::int64_t{1024}));
  EXPECT_EQ(FoldBinary("pow", Scalar(2), Scalar(-1)), Scalar(0.5));
  EXPECT_EQ(FoldBinary("multiply", Scalar(true), Scalar(3)), Scalar(std::int64_t{3}));
  EXPECT_EQ(FoldBinary("add", Scalar(1), Scalar(0.5)), Scalar(1.5));
}

TEST(ExpressionScalarsTest, FloorDivisionAndModuloFollowPython) {
  EXPECT_EQ(FoldBinary("floor_divide", Scalar(-7), Scalar(2)), Scalar(std::int64_t{-4}));
  EXPECT_EQ(FoldBinary("remainder", Scalar(-7), Scalar(2)), Scalar(std::int64_t{1}));
  EXPECT_EQ(FoldBinary("remainder", Scalar(7), Scalar(-2)), Scalar(std::int64_t{-1}));
  EXPECT_EQ(FoldBinary("floor_divide", Scalar(-7.0), Scalar(2)), Scalar(-4.0));
  EXPECT_EQ(FoldBinary("remainder", Scalar(-7.5), Scalar(2)), Scalar(0.5));
  EXPECT_EQ(FoldBinary("remainder", Scalar(std::numeric_limits<std::int64_t>::min()), Scalar(-1)),
            Scalar(std::int64_t{0}));
  EXPECT_THROW(FoldBinary("floor_divide", Scalar(1), Scalar(0)), InvalidArgument);
  EXPECT_THROW(FoldBinary("remainder", Scalar(1), Scalar(0)), InvalidArgument);
  EXPECT_THROW(FoldBinary("divide", Scalar(1.0), Scalar(0)), InvalidArgument);
}

TEST(ExpressionScalarsTest, IntegerOverflowIsAnError) {
  const Scalar largest(std::numeric_limits<std::int64_t>::max());
  EXPECT_THROW(FoldBinary("add", largest, Scalar(1)), InvalidArgument);
  EXPECT_THROW(FoldBinary("multiply", largest, Scalar(2)), InvalidArgument);
  EXPECT_THROW(FoldBinary("pow", Scalar(2), Scalar(64)), InvalidArgument);
  EXPECT_EQ(FoldBinary("pow", Scalar(2), Scalar(62)), Scalar(std::int64_t{1} << 62));
  EXPECT_THROW(FoldUnary("negative", Scalar(std::numeric_limits<std::int64_t>::min())),
               InvalidArgument);
  EXPECT_THROW(
      FoldBinary("floor_divide", Scalar(std::numeric_limits<std::int64_t>::min()), Scalar(-1)),
      InvalidArgument);
}

TEST(ExpressionScalarsTest, ComparisonsLogicAndBits) {
  EXPECT_EQ(FoldBinary("less", Scalar(1), Scalar(1.5)), Scalar(true));
  EXPECT_EQ(FoldBinary("equal", Scalar(std::int64_t{9007199254740993}),
                       Scalar(std::int64_t{9007199254740992})),
            Scalar(false));  // compared exactly, not as doubles
  EXPECT_EQ(FoldBinary("logical_and", Scalar(2), Scalar(0.0)), Scalar(false));
  EXPECT_EQ(FoldBinary("bitwise_and", Scalar(true), Scalar(false)), Scalar(false));
  EXPECT_EQ(FoldBinary("bitwise_xor", Scalar(6), Scalar(3)), Scalar(std::int64_t{5}));
  EXPECT_EQ(FoldBinary("bitwise_left_shift", Scalar(1), Scalar(4)), Scalar(std::int64_t{16}));
  EXPECT_THROW(FoldBinary("bitwise_or", Scalar(1.0), Scalar(2)), InvalidArgument);
  EXPECT_THROW(FoldBinary("bitwise_left_shift", Scalar(1), Scalar(64)), InvalidArgument);
  // Bits shifted out of int64 are an overflow, as other integer overflows are.
  EXPECT_EQ(FoldBinary("bitwise_left_shift", Scalar(1), Scalar(62)), Scalar(std::int64_t{1} << 62));
  EXPECT_THROW(FoldBinary("bitwise_left_shift", Scalar(1), Scalar(63)), InvalidArgument);
  EXPECT_THROW(FoldBinary("bitwise_left_shift", Scalar(3), Scalar(62)), InvalidArgument);
  EXPECT_EQ(FoldBinary("bitwise_left_shift", Scalar(-1), Scalar(63)),
            Scalar(std::numeric_limits<std::int64_t>::min()));
  // Floor division by an infinity, as Python.
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(FoldBinary("floor_divide", Scalar(1.0), Scalar(inf)), Scalar(0.0));
  EXPECT_EQ(FoldBinary("floor_divide", Scalar(-1.0), Scalar(inf)), Scalar(-1.0));
  EXPECT_EQ(FoldBinary("floor_divide", Scalar(1.0), Scalar(-inf)), Scalar(-1.0));
  EXPECT_EQ(FoldBinary("remainder", Scalar(-1.0), Scalar(inf)), Scalar(inf));
  EXPECT_EQ(FoldUnary("bitwise_invert", Scalar(true)), Scalar(false));
  EXPECT_EQ(FoldUnary("bitwise_invert", Scalar(5)), Scalar(std::int64_t{-6}));
  EXPECT_THROW(FoldUnary("bitwise_invert", Scalar(1.5)), InvalidArgument);
  EXPECT_EQ(FoldUnary("logical_not", Scalar(0)), Scalar(true));
}

TEST(ExpressionScalarsTest, MathFunctions) {
  EXPECT_EQ(FoldUnary("log", Scalar(1)), Scalar(0.0));
  EXPECT_DOUBLE_EQ(FoldUnary("exp", Scalar(1)).As<double>(), std::exp(1.0));
  EXPECT_EQ(FoldUnary("round", Scalar(2.5)), Scalar(2.0));  // half to even, as numpy
  EXPECT_EQ(FoldUnary("abs", Scalar(-3)), Scalar(std::int64_t{3}));
  EXPECT_EQ(FoldUnary("sign", Scalar(-0.5)), Scalar(-1.0));
  EXPECT_EQ(FoldUnary("square", Scalar(-3)), Scalar(std::int64_t{9}));
  EXPECT_EQ(FoldUnary("isnan", Scalar(std::nan(""))), Scalar(true));
  EXPECT_EQ(FoldUnary("isfinite", Scalar(3)), Scalar(true));
  EXPECT_TRUE(std::isnan(FoldBinary("maximum", Scalar(std::nan("")), Scalar(1)).As<double>()));
  EXPECT_EQ(FoldBinary("minimum", Scalar(3), Scalar(-2)), Scalar(std::int64_t{-2}));
  EXPECT_DOUBLE_EQ(FoldBinary("hypot", Scalar(3), Scalar(4)).As<double>(), 5.0);
  EXPECT_NEAR(FoldBinary("logaddexp", Scalar(0.0), Scalar(0.0)).As<double>(), std::log(2.0), 1e-15);
}

}  // namespace
}  // namespace tessera::expression
