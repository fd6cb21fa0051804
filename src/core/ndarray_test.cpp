#include "tessera/core/ndarray.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

namespace tessera {
namespace {

TEST(NDArray, ShapeSizeAndBytes) {
  NDArray array({3, 4}, float32);
  EXPECT_EQ(array.ndim(), 2);
  EXPECT_EQ(array.size(), 12);
  EXPECT_EQ(array.nbytes(), 48);
  EXPECT_EQ(array.data<float>().size(), 12u);
  EXPECT_EQ(NDArray().size(), 1);
  EXPECT_EQ(NDArray().ndim(), 0);
}

TEST(NDArray, TypedAccessChecksDtype) {
  NDArray array({2}, int32);
  EXPECT_THROW(array.data<double>(), InvalidArgument);
  EXPECT_THROW(array.mutable_data<std::int64_t>(), InvalidArgument);
  EXPECT_NO_THROW(array.data<std::int32_t>());
}

TEST(NDArray, FullConvertsAndFromValuesCopies) {
  NDArray full = NDArray::Full({2, 2}, int16, 7.9);
  for (std::int16_t value : full.data<std::int16_t>()) EXPECT_EQ(value, 7);
  std::vector<double> values = {1, 2, 3, 4, 5, 6};
  NDArray array = NDArray::FromValues<double>({2, 3}, values);
  EXPECT_EQ(array.data<double>()[4], 5.0);
  EXPECT_EQ(array.GetAsDouble(5), 6.0);
  EXPECT_THROW(array.GetAsDouble(6), InvalidArgument);
  EXPECT_THROW(NDArray::FromValues<double>({4}, values), InvalidArgument);
  NDArray nan = NDArray::Full({1}, float64, NAN);
  EXPECT_TRUE(std::isnan(nan.data<double>()[0]));
}

TEST(NDArray, CopyIsDeepAndEqualityIsBytewise) {
  std::vector<std::int64_t> values = {1, 2, 3};
  NDArray a = NDArray::FromValues<std::int64_t>({3}, values);
  NDArray b = a;
  EXPECT_EQ(a, b);
  b.mutable_data<std::int64_t>()[0] = 9;
  EXPECT_EQ(a.data<std::int64_t>()[0], 1);
  EXPECT_FALSE(a == b);
  EXPECT_FALSE(a == NDArray::Full({3}, int32, 1));
  EXPECT_FALSE(a == NDArray::Full({1, 3}, int64, 1));
}

TEST(NDArray, FullRejectsValuesOutsideTheDtype) {
  EXPECT_THROW(NDArray::Full({2}, int8, 300), InvalidArgument);
  EXPECT_THROW(NDArray::Full({2}, int8, 128), InvalidArgument);
  EXPECT_THROW(NDArray::Full({2}, uint8, -1), InvalidArgument);
  EXPECT_THROW(NDArray::Full({2}, int32, NAN), InvalidArgument);
  EXPECT_THROW(NDArray::Full({2}, uint64, 18446744073709551616.0), InvalidArgument);
  EXPECT_EQ(NDArray::Full({1}, int8, -128).data<std::int8_t>()[0], -128);
  EXPECT_EQ(NDArray::Full({1}, int8, 127.9).data<std::int8_t>()[0], 127);
  EXPECT_EQ(NDArray::Full({1}, uint8, 255).data<std::uint8_t>()[0], 255);
  EXPECT_TRUE(NDArray::Full({1}, bool_, 0.5).data<bool>()[0]);
}

TEST(NDArray, BorrowedIsReadOnlyAndItsCopyIsWritable) {
  auto values = std::make_shared<std::vector<double>>(std::vector<double>{1, 2, 3, 4, 5, 6});
  const auto* bytes = reinterpret_cast<const std::byte*>(values->data());
  NDArray borrowed = NDArray::Borrow({2, 3}, float64, bytes, values);
  EXPECT_TRUE(borrowed.borrowed());
  EXPECT_EQ(borrowed.data<double>()[4], 5.0);
  (*values)[4] = 50;  // a view: the owner's writes show
  EXPECT_EQ(borrowed.GetAsDouble(4), 50.0);
  EXPECT_THROW(borrowed.mutable_data<double>(), InvalidArgument);
  EXPECT_THROW(borrowed.mutable_bytes(), InvalidArgument);
  NDArray copy = borrowed;
  EXPECT_FALSE(copy.borrowed());
  copy.mutable_data<double>()[0] = -1;
  EXPECT_EQ((*values)[0], 1.0);
  EXPECT_EQ(copy, NDArray::FromValues<double>({2, 3}, std::vector<double>{-1, 2, 3, 4, 50, 6}));
  EXPECT_THROW(NDArray::Borrow({2}, float64, bytes + 1, values), InvalidArgument);  // unaligned
}

TEST(NDArray, MovedFromIsEmpty) {
  NDArray a = NDArray::Full({4, 4}, float64, 1);
  NDArray b = std::move(a);
  EXPECT_EQ(b.size(), 16);
  EXPECT_EQ(a.size(), 0);  // NOLINT(bugprone-use-after-move): documented state
  EXPECT_EQ(a.nbytes(), 0);
  EXPECT_TRUE(a.bytes().empty());
}

TEST(NDArray, RejectsNegativeAndOverflowingShapes) {
  EXPECT_THROW(NDArray({-1}, int8), InvalidArgument);
  EXPECT_THROW(NDArray({Index{1} << 62, 4}, int8), InvalidArgument);
  EXPECT_THROW(NDArray({Index{1} << 61}, float64), InvalidArgument);
  EXPECT_EQ(NDArray({0, 5}, float64).nbytes(), 0);
}

}  // namespace
}  // namespace tessera
