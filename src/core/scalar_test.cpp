#include "tessera/core/scalar.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>

namespace tessera {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(Scalar, KindFollowsTheCppType) {
  EXPECT_EQ(Scalar(true).kind(), ScalarKind::kBool);
  EXPECT_EQ(Scalar(std::int8_t{-3}).kind(), ScalarKind::kInt);
  EXPECT_EQ(Scalar(std::uint64_t{3}).kind(), ScalarKind::kInt);
  EXPECT_EQ(Scalar(2.5f).kind(), ScalarKind::kFloat);
  EXPECT_EQ(Scalar(2.5).kind(), ScalarKind::kFloat);
  EXPECT_EQ(Scalar().kind(), ScalarKind::kFloat);
  // Signed values are held as int64, unsigned as uint64.
  EXPECT_EQ(Scalar(std::int16_t{-7}), Scalar(std::int64_t{-7}));
  EXPECT_EQ(Scalar(std::uint8_t{7}), Scalar(std::uint64_t{7}));
  EXPECT_NE(Scalar(7), Scalar(7.0));
}

TEST(Scalar, LargeIntegersStayExact) {
  const Scalar big(std::int64_t{(std::int64_t{1} << 53) + 1});  // not a double
  EXPECT_EQ(big.As<std::int64_t>(), 9007199254740993);
  EXPECT_EQ(big.As<double>(), 9007199254740992.0);
  const Scalar max(std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(max.As<std::uint64_t>(), 18446744073709551615u);
  EXPECT_EQ(max.As<std::int64_t>(), -1);  // wraps as astype
  EXPECT_EQ(max.As<std::uint8_t>(), 255);
}

TEST(Scalar, IntegerConversionsWrap) {
  EXPECT_EQ(Scalar(300).As<std::uint8_t>(), 44);
  EXPECT_EQ(Scalar(300).As<std::int8_t>(), 44);
  EXPECT_EQ(Scalar(-1).As<std::uint16_t>(), 65535);
  EXPECT_EQ(Scalar(-1).As<std::uint32_t>(), 4294967295u);
  EXPECT_EQ(Scalar(-129).As<std::int8_t>(), 127);
  EXPECT_EQ(Scalar(40000).As<std::int16_t>(), -25536);
  EXPECT_EQ(Scalar(-2).As<double>(), -2.0);
  EXPECT_EQ(Scalar(true).As<std::int32_t>(), 1);
  EXPECT_EQ(Scalar(true).As<float>(), 1.0f);
  EXPECT_EQ(Scalar(false).As<double>(), 0.0);
}

TEST(Scalar, FloatToIntegerTruncatesSaturatesAndMapsNaNToZero) {
  EXPECT_EQ(Scalar(2.9).As<std::int32_t>(), 2);
  EXPECT_EQ(Scalar(-2.9).As<std::int32_t>(), -2);
  EXPECT_EQ(Scalar(-0.5).As<std::uint8_t>(), 0);
  EXPECT_EQ(Scalar(255.9).As<std::uint8_t>(), 255);
  EXPECT_EQ(Scalar(256.0).As<std::uint8_t>(), 255);
  EXPECT_EQ(Scalar(-1.0).As<std::uint8_t>(), 0);
  EXPECT_EQ(Scalar(127.5).As<std::int8_t>(), 127);
  EXPECT_EQ(Scalar(-128.9).As<std::int8_t>(), -128);
  EXPECT_EQ(Scalar(1e10).As<std::int32_t>(), 2147483647);
  EXPECT_EQ(Scalar(-1e10).As<std::int32_t>(), -2147483647 - 1);
  EXPECT_EQ(Scalar(9.3e18).As<std::int64_t>(), std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(Scalar(-9.3e18).As<std::int64_t>(), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(Scalar(1.8e19).As<std::uint64_t>(), 18000000000000000000u);
  EXPECT_EQ(Scalar(1.9e19).As<std::uint64_t>(), std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(Scalar(kInf).As<std::int16_t>(), 32767);
  EXPECT_EQ(Scalar(-kInf).As<std::uint32_t>(), 0u);
  EXPECT_EQ(Scalar(kNaN).As<std::int64_t>(), 0);
  EXPECT_EQ(Scalar(kNaN).As<std::uint8_t>(), 0);
}

TEST(Scalar, ToBoolIsNonzero) {
  EXPECT_TRUE(Scalar(0.1).As<bool>());
  EXPECT_TRUE(Scalar(kNaN).As<bool>());
  EXPECT_FALSE(Scalar(-0.0).As<bool>());
  EXPECT_TRUE(Scalar(256).As<bool>());  // not truncated to a byte first
  EXPECT_FALSE(Scalar(0).As<bool>());
}

TEST(Scalar, FloatConversions) {
  EXPECT_EQ(Scalar(0.1).As<float>(), 0.1f);
  EXPECT_EQ(Scalar(1e300).As<float>(), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(Scalar(kNaN).As<float>()));
  EXPECT_EQ(Scalar(std::uint64_t{18446744073709551615u}).As<float>(), 18446744073709551616.0f);
}

TEST(Scalar, ComplexNumbers) {
  using Complex = std::complex<double>;
  EXPECT_EQ(Scalar(Complex(1, 2)).kind(), ScalarKind::kComplex);
  EXPECT_EQ(Scalar(std::complex<float>(1, 2)).kind(), ScalarKind::kComplex);
  // Python's repr.
  EXPECT_EQ(Scalar(Complex(1, 2)).ToString(), "(1+2j)");
  EXPECT_EQ(Scalar(Complex(0, 2.5)).ToString(), "2.5j");
  EXPECT_EQ(Scalar(Complex(-0.0, -1)).ToString(), "(-0-1j)");
  EXPECT_EQ(Scalar(Complex(kNaN, std::numeric_limits<double>::infinity())).ToString(),
            "(nan+infj)");
  // To real types the real part, to bool whether either part is nonzero; a real becomes a
  // complex number with a zero imaginary part.
  EXPECT_EQ(Scalar(Complex(2.5, 7)).As<double>(), 2.5);
  EXPECT_EQ(Scalar(Complex(-3.9, 7)).As<std::int8_t>(), -3);
  EXPECT_TRUE(Scalar(Complex(0, 1e-300)).As<bool>());
  EXPECT_FALSE(Scalar(Complex(0, -0.0)).As<bool>());
  EXPECT_EQ(Scalar(3).As<std::complex<float>>(), std::complex<float>(3, 0));
  std::complex<float> stored;
  Scalar(Complex(0.5, -0.25)).WriteAs(complex64, &stored);
  EXPECT_EQ(stored, std::complex<float>(0.5f, -0.25f));
}

TEST(Scalar, WriteAsStoresTheConvertedBytes) {
  std::int16_t as_int16 = 0;
  Scalar(-2.5).WriteAs(int16, &as_int16);
  EXPECT_EQ(as_int16, -2);
  double as_double = 0;
  Scalar(7).WriteAs(float64, &as_double);
  EXPECT_EQ(as_double, 7.0);
  unsigned char as_bool = 2;
  Scalar(3).WriteAs(bool_, &as_bool);
  EXPECT_EQ(as_bool, 1);
  float as_float = 0;
  Scalar(true).WriteAs(float32, &as_float);
  EXPECT_EQ(as_float, 1.0f);
}

TEST(Scalar, ToString) {
  EXPECT_EQ(Scalar(3).ToString(), "3");
  EXPECT_EQ(Scalar(-3).ToString(), "-3");
  EXPECT_EQ(Scalar(std::numeric_limits<std::uint64_t>::max()).ToString(), "18446744073709551615");
  EXPECT_EQ(Scalar(true).ToString(), "True");
  EXPECT_EQ(Scalar(false).ToString(), "False");
  EXPECT_EQ(Scalar(3.0).ToString(), "3.0");
  EXPECT_EQ(Scalar(1.5).ToString(), "1.5");
  EXPECT_EQ(Scalar(0.1).ToString(), "0.1");
  EXPECT_EQ(Scalar(273.15f).ToString(), "273.1499938964844");  // the float's exact double
  EXPECT_EQ(Scalar(1e300).ToString(), "1e+300");
  EXPECT_EQ(Scalar(-kInf).ToString(), "-inf");
  EXPECT_EQ(Scalar(kNaN).ToString(), "nan");
}

TEST(CastElement, IsUsableAtCompileTime) {
  static_assert(CastElement<std::int8_t>(200.0) == 127);
  static_assert(CastElement<std::uint16_t>(-5) == 65531);
  static_assert(CastElement<bool>(0.5f));
  static_assert(CastElement<std::int64_t>(-9.3e18f) == std::numeric_limits<std::int64_t>::min());
  static_assert(CastElement<std::uint32_t>(4294967296.0f) == 4294967295u);
  static_assert(CastElement<std::int32_t>(2147483520.0f) == 2147483520);  // largest below 2^31
}

}  // namespace
}  // namespace tessera
