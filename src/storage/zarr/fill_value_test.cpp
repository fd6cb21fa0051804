// Fill elements (fill_value.cpp). Parsing and writing the .zarray key are tested with
// the whole document in zarr_metadata_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <span>

#include "tessera/core/errors.hpp"
#include "tessera/storage/zarr_metadata.hpp"

namespace tessera {
namespace {

template <class T>
T FillElement(const FillValue& fill) {
  T element{};
  EncodeFillElement(fill, DTypeOf<T>(), std::as_writable_bytes(std::span<T>(&element, 1)));
  return element;
}

TEST(EncodeFillElementTest, ConvertsToTheDtype) {
  EXPECT_EQ(FillElement<double>(std::monostate{}), 0.0);
  EXPECT_EQ(FillElement<std::int32_t>(std::monostate{}), 0);
  EXPECT_EQ(FillElement<double>(2.5), 2.5);
  EXPECT_TRUE(std::isnan(FillElement<float>(std::numeric_limits<double>::quiet_NaN())));
  EXPECT_EQ(FillElement<float>(-std::numeric_limits<double>::infinity()),
            -std::numeric_limits<float>::infinity());
  EXPECT_EQ(FillElement<std::int8_t>(std::int64_t{-128}), -128);
  EXPECT_EQ(FillElement<std::uint64_t>(std::numeric_limits<std::uint64_t>::max()),
            std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(FillElement<std::int64_t>(std::numeric_limits<std::int64_t>::min()),
            std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(FillElement<std::uint16_t>(7.0), 7);
  EXPECT_EQ(FillElement<bool>(true), true);
  EXPECT_EQ(FillElement<bool>(std::int64_t{0}), false);
  EXPECT_EQ(FillElement<double>(std::int64_t{-3}), -3.0);
  EXPECT_EQ(FillElement<std::int32_t>(true), 1);
}

TEST(EncodeFillElementTest, RejectsWhatTheDtypeCannotHold) {
  EXPECT_THROW(FillElement<std::uint8_t>(std::int64_t{256}), InvalidArgument);
  EXPECT_THROW(FillElement<std::int8_t>(std::int64_t{-129}), InvalidArgument);
  EXPECT_THROW(FillElement<std::uint32_t>(std::int64_t{-1}), InvalidArgument);
  EXPECT_THROW(FillElement<std::int64_t>(std::numeric_limits<std::uint64_t>::max()),
               InvalidArgument);
  EXPECT_THROW(FillElement<std::int32_t>(1.5), InvalidArgument);
  EXPECT_THROW(FillElement<std::int32_t>(std::numeric_limits<double>::quiet_NaN()),
               InvalidArgument);
  EXPECT_THROW(FillElement<float>(1e300), InvalidArgument);
  std::byte too_small[2];
  EXPECT_THROW(EncodeFillElement(1.0, float64, too_small), InvalidArgument);
}

}  // namespace
}  // namespace tessera
