#include "tessera/core/shape.hpp"

#include <gtest/gtest.h>

#include <limits>

#include "tessera/core/errors.hpp"

namespace tessera {
namespace {

TEST(Shape, SizeIsProductAndOneFor0d) {
  EXPECT_EQ(ShapeSize(Shape{}), 1);
  EXPECT_EQ(ShapeSize(Shape{3, 4, 5}), 60);
  EXPECT_EQ(ShapeSize(Shape{3, 0, 5}), 0);
}

TEST(Shape, OverflowIsAnError) {
  const Index big = std::numeric_limits<Index>::max() / 2;
  EXPECT_THROW(ShapeSize(Shape{big, 3}), InvalidArgument);
  EXPECT_THROW(CheckedMul(big, 4), InvalidArgument);
  EXPECT_THROW(CheckedAdd(std::numeric_limits<Index>::max(), 1), InvalidArgument);
  EXPECT_EQ(CheckedMul(1 << 20, 1 << 20), Index{1} << 40);
}

TEST(Shape, ToStringUsesNumpyTupleNotation) {
  EXPECT_EQ(ShapeToString(Shape{}), "()");
  EXPECT_EQ(ShapeToString(Shape{7}), "(7,)");
  EXPECT_EQ(ShapeToString(Shape{10000, 1000}), "(10000, 1000)");
}

TEST(Shape, UnravelIndexInvertsCStrides) {
  const Shape shape{3, 4, 5};
  const Shape strides = CStrides(shape);
  for (Index linear = 0; linear < 60; ++linear) {
    const Shape position = UnravelIndex(linear, shape);
    Index back = 0;
    for (std::size_t dim = 0; dim < 3; ++dim) {
      ASSERT_LT(position[dim], shape[dim]);
      back += position[dim] * strides[dim];
    }
    ASSERT_EQ(back, linear);
  }
  EXPECT_EQ(UnravelIndex(0, Shape{}), Shape{});
}

TEST(Shape, ParseShape) {
  EXPECT_EQ(ParseShape("8760,181,360", "--shape"), (Shape{8760, 181, 360}));
  EXPECT_EQ(ParseShape("7", "--shape"), (Shape{7}));
  EXPECT_EQ(ParseShape("", "--shape"), Shape{});
  EXPECT_EQ(ParseShape("-3,4", "--shape"), (Shape{-3, 4}));  // ranges are the caller's
  for (const char* bad : {"1,,2", "1,", ",1", "a", "1.5", "1 ,2", "99999999999999999999"}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW(ParseShape(bad, "--chunks"), InvalidArgument);
  }
  try {
    ParseShape("10,x", "--chunks");
  } catch (const InvalidArgument& error) {
    EXPECT_NE(std::string(error.what()).find("--chunks"), std::string::npos);
    EXPECT_NE(std::string(error.what()).find("10,x"), std::string::npos);
  }
}

TEST(Shape, CStrides) {
  EXPECT_EQ(CStrides(Shape{2, 3, 4}), (Shape{12, 4, 1}));
  EXPECT_EQ(CStrides(Shape{}), Shape{});
  EXPECT_EQ(CeilDiv(10, 4), 3);
  EXPECT_EQ(CeilDiv(0, 4), 0);
  EXPECT_EQ(CeilDiv(8, 4), 2);
}

}  // namespace
}  // namespace tessera
