// Signatures, errors, named edge cases and loop properties of the elementwise kernels.
// Every op on every dtype against numpy's values: elementwise_numpy_test.cpp.
#include "elementwise_kernels.hpp"

#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "tessera/core/errors.hpp"
#include "tessera/core/scalar.hpp"
#include "tessera/core/type_promotion.hpp"

namespace tessera::kernels {
namespace {

constexpr std::array<DType, 11> kAllDTypes = {bool_,  int8,   int16,  int32,   int64,  uint8,
                                              uint16, uint32, uint64, float32, float64};
constexpr int kUnaryOps = static_cast<int>(UnaryOp::kBitwiseInvert) + 1;
constexpr int kBinaryOps = static_cast<int>(BinaryOp::kBitwiseRightShift) + 1;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// numpy's one-letter type codes ('x': numpy raises TypeError).
DType FromCode(char code) {
  constexpr std::string_view kCodes = "?bhilBHILfd";
  return kAllDTypes[kCodes.find(code)];
}

template <class T, class... V>
constexpr std::array<T, sizeof...(V)> Of(V... values) {
  return {static_cast<T>(values)...};
}

// Runs op on `in` (dtype In) and checks that the result has dtype Out.
template <class Out, class In, std::size_t N>
std::array<Out, N> Unary(UnaryOp op, const std::array<In, N>& in) {
  EXPECT_EQ(ResolveUnary(op, DTypeOf<In>()).output, DTypeOf<Out>()) << Name(op);
  std::array<Out, N> out{};
  GetUnaryKernel(op, DTypeOf<In>())(in.data(), out.data(), static_cast<std::int64_t>(N));
  return out;
}

template <class Out, class In, std::size_t N>
std::array<Out, N> Binary(BinaryOp op, const std::array<In, N>& a, const std::array<In, N>& b) {
  EXPECT_EQ(ResolveBinary(op, DTypeOf<In>(), DTypeOf<In>()).output, DTypeOf<Out>()) << Name(op);
  std::array<Out, N> out{};
  GetBinaryKernel(op, DTypeOf<In>())(a.data(), b.data(), out.data(), static_cast<std::int64_t>(N));
  return out;
}

std::string ErrorOf(auto&& call) {
  try {
    call();
  } catch (const InvalidArgument& error) {
    return error.what();
  }
  return "(no error)";
}

TEST(ElementwiseSignature, UnaryMatchesNumpy) {
  // numpy 1.24's np.<op>(np.ones(2, t)).dtype.char for t = bool, int8, ..., float64, with
  // float16 read as float32. Two documented differences: floor/ceil/trunc/round keep
  // integer dtypes (numpy 1.24 returns floats; numpy 2 and the array API keep them).
  struct Expected {
    std::initializer_list<UnaryOp> ops;
    std::string_view outputs;
  };
  const Expected table[] = {
      {{UnaryOp::kNegative, UnaryOp::kPositive, UnaryOp::kSign}, "xbhilBHILfd"},
      {{UnaryOp::kAbs, UnaryOp::kFloor, UnaryOp::kCeil, UnaryOp::kTrunc, UnaryOp::kRound},
       "?bhilBHILfd"},
      {{UnaryOp::kSquare}, "bbhilBHILfd"},
      {{UnaryOp::kSqrt, UnaryOp::kExp, UnaryOp::kExpm1, UnaryOp::kLog, UnaryOp::kLog1p,
        UnaryOp::kLog2, UnaryOp::kLog10, UnaryOp::kSin, UnaryOp::kCos, UnaryOp::kTan,
        UnaryOp::kAsin, UnaryOp::kAcos, UnaryOp::kAtan, UnaryOp::kSinh, UnaryOp::kCosh,
        UnaryOp::kTanh, UnaryOp::kAsinh, UnaryOp::kAcosh, UnaryOp::kAtanh},
       "fffddffddfd"},
      {{UnaryOp::kIsNan, UnaryOp::kIsInf, UnaryOp::kIsFinite, UnaryOp::kLogicalNot}, "???????????"},
      {{UnaryOp::kBitwiseInvert}, "?bhilBHILxx"},
  };
  std::set<UnaryOp> seen;
  for (const Expected& row : table) {
    for (UnaryOp op : row.ops) {
      seen.insert(op);
      for (std::size_t index = 0; index < kAllDTypes.size(); ++index) {
        const DType dtype = kAllDTypes[index];
        SCOPED_TRACE(std::string(Name(op)) + " of " + std::string(dtype.name()));
        if (row.outputs[index] == 'x') {
          EXPECT_THROW(ResolveUnary(op, dtype), InvalidArgument);
          continue;
        }
        const Signature signature = ResolveUnary(op, dtype);
        EXPECT_EQ(signature.output, FromCode(row.outputs[index]));
        // Predicates compute on the operand itself; the rest compute in their output dtype.
        EXPECT_EQ(signature.input, signature.output == bool_ ? dtype : signature.output);
      }
    }
  }
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(kUnaryOps));
}

TEST(ElementwiseSignature, BinaryMatchesNumpyForEveryPair) {
  // numpy 1.24's np.<op>(np.ones(2, a), np.ones(2, b)).dtype.char for every pair (rows a,
  // columns b, both in the order bool, int8, ..., float64), float16 read as float32.
  struct Expected {
    std::initializer_list<BinaryOp> ops;
    std::array<std::string_view, 11> outputs;
  };
  // clang-format off
  const Expected table[] = {
    {{BinaryOp::kAdd, BinaryOp::kMultiply, BinaryOp::kMaximum, BinaryOp::kMinimum},
     {"?bhilBHILfd", "bbhilhildfd", "hhhilhildfd", "iiiiliilddd", "llllllllddd", "BhhilBHILfd",
      "HiiilHHILfd", "IllllIIILdd", "LddddLLLLdd", "fffddffddfd", "ddddddddddd"}},
    {{BinaryOp::kSubtract},
     {"xbhilBHILfd", "bbhilhildfd", "hhhilhildfd", "iiiiliilddd", "llllllllddd", "BhhilBHILfd",
      "HiiilHHILfd", "IllllIIILdd", "LddddLLLLdd", "fffddffddfd", "ddddddddddd"}},
    {{BinaryOp::kDivide},
     {"dddddddddfd", "dddddddddfd", "dddddddddfd", "ddddddddddd", "ddddddddddd", "dddddddddfd",
      "dddddddddfd", "ddddddddddd", "ddddddddddd", "fffddffddfd", "ddddddddddd"}},
    {{BinaryOp::kFloorDivide, BinaryOp::kRemainder, BinaryOp::kPow},
     {"bbhilBHILfd", "bbhilhildfd", "hhhilhildfd", "iiiiliilddd", "llllllllddd", "BhhilBHILfd",
      "HiiilHHILfd", "IllllIIILdd", "LddddLLLLdd", "fffddffddfd", "ddddddddddd"}},
    {{BinaryOp::kAtan2, BinaryOp::kHypot, BinaryOp::kLogaddexp, BinaryOp::kCopysign},
     {"fffddffddfd", "fffddffddfd", "fffddffddfd", "ddddddddddd", "ddddddddddd", "fffddffddfd",
      "fffddffddfd", "ddddddddddd", "ddddddddddd", "fffddffddfd", "ddddddddddd"}},
    {{BinaryOp::kEqual, BinaryOp::kNotEqual, BinaryOp::kLess, BinaryOp::kLessEqual,
      BinaryOp::kGreater, BinaryOp::kGreaterEqual, BinaryOp::kLogicalAnd, BinaryOp::kLogicalOr,
      BinaryOp::kLogicalXor},
     {"???????????", "???????????", "???????????", "???????????", "???????????", "???????????",
      "???????????", "???????????", "???????????", "???????????", "???????????"}},
    {{BinaryOp::kBitwiseAnd, BinaryOp::kBitwiseOr, BinaryOp::kBitwiseXor},
     {"?bhilBHILxx", "bbhilhilxxx", "hhhilhilxxx", "iiiiliilxxx", "llllllllxxx", "BhhilBHILxx",
      "HiiilHHILxx", "IllllIIILxx", "LxxxxLLLLxx", "xxxxxxxxxxx", "xxxxxxxxxxx"}},
    {{BinaryOp::kBitwiseLeftShift, BinaryOp::kBitwiseRightShift},
     {"bbhilBHILxx", "bbhilhilxxx", "hhhilhilxxx", "iiiiliilxxx", "llllllllxxx", "BhhilBHILxx",
      "HiiilHHILxx", "IllllIIILxx", "LxxxxLLLLxx", "xxxxxxxxxxx", "xxxxxxxxxxx"}},
  };
  // clang-format on
  std::set<BinaryOp> seen;
  for (const Expected& row : table) {
    for (BinaryOp op : row.ops) {
      seen.insert(op);
      for (std::size_t left = 0; left < kAllDTypes.size(); ++left) {
        for (std::size_t right = 0; right < kAllDTypes.size(); ++right) {
          const DType a = kAllDTypes[left];
          const DType b = kAllDTypes[right];
          SCOPED_TRACE(std::string(Name(op)) + " of " + std::string(a.name()) + " and " +
                       std::string(b.name()));
          const char code = row.outputs[left][right];
          if (code == 'x') {
            EXPECT_THROW(ResolveBinary(op, a, b), InvalidArgument);
            continue;
          }
          const Signature signature = ResolveBinary(op, a, b);
          EXPECT_EQ(signature.output, FromCode(code));
          EXPECT_EQ(signature.input,
                    signature.output == bool_ ? ResultType(a, b) : signature.output);
        }
      }
    }
  }
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(kBinaryOps));
}

// Casting both operands to signature.input and resolving again gives the same signature,
// so GetBinaryKernel(op, signature.input) computes what ResolveBinary promised.
TEST(ElementwiseSignature, ResolvingTheInputDtypeAgainIsStable) {
  for (int raw = 0; raw < kBinaryOps; ++raw) {
    const auto op = static_cast<BinaryOp>(raw);
    for (DType a : kAllDTypes) {
      for (DType b : kAllDTypes) {
        Signature signature{bool_, bool_};
        try {
          signature = ResolveBinary(op, a, b);
        } catch (const InvalidArgument&) {
          continue;
        }
        SCOPED_TRACE(std::string(Name(op)) + " of " + std::string(a.name()) + " and " +
                     std::string(b.name()));
        const Signature again = ResolveBinary(op, signature.input, signature.input);
        EXPECT_EQ(again.input, signature.input);
        EXPECT_EQ(again.output, signature.output);
        EXPECT_NE(GetBinaryKernel(op, signature.input), nullptr);
      }
    }
  }
  for (int raw = 0; raw < kUnaryOps; ++raw) {
    const auto op = static_cast<UnaryOp>(raw);
    for (DType dtype : kAllDTypes) {
      try {
        const Signature signature = ResolveUnary(op, dtype);
        const Signature again = ResolveUnary(op, signature.input);
        EXPECT_EQ(again.input, signature.input) << Name(op) << " of " << dtype.name();
        EXPECT_EQ(again.output, signature.output) << Name(op) << " of " << dtype.name();
        EXPECT_NE(GetUnaryKernel(op, dtype), nullptr);
      } catch (const InvalidArgument&) {
      }
    }
  }
}

TEST(ElementwiseSignature, ErrorsNameTheOpAndTheDtypes) {
  EXPECT_EQ(ErrorOf([] { ResolveBinary(BinaryOp::kBitwiseAnd, float32, float32); }),
            "bitwise_and is not defined for float32; cast with astype first");
  EXPECT_EQ(ErrorOf([] { ResolveBinary(BinaryOp::kBitwiseLeftShift, int64, uint64); }),
            "bitwise_left_shift is not defined for int64 and uint64 (which promote to "
            "float64); cast with astype first");
  EXPECT_EQ(ErrorOf([] { ResolveUnary(UnaryOp::kNegative, bool_); }),
            "negative is not defined for bool; use logical_not to flip booleans, or cast with "
            "astype first");
  EXPECT_EQ(ErrorOf([] { ResolveBinary(BinaryOp::kSubtract, bool_, bool_); }),
            "subtract is not defined for bool; use logical_xor for booleans, or cast with "
            "astype first");
  EXPECT_EQ(ErrorOf([] { GetUnaryKernel(UnaryOp::kBitwiseInvert, float64); }),
            "bitwise_invert is not defined for float64; cast with astype first");
  EXPECT_EQ(ErrorOf([] { GetBinaryKernel(BinaryOp::kBitwiseXor, float32); }),
            "bitwise_xor is not defined for float32; cast with astype first");
}

TEST(ElementwiseSignature, NamesAreTheArrayApiNames) {
  std::set<std::string_view> names;
  for (int raw = 0; raw < kUnaryOps; ++raw) names.insert(Name(static_cast<UnaryOp>(raw)));
  for (int raw = 0; raw < kBinaryOps; ++raw) names.insert(Name(static_cast<BinaryOp>(raw)));
  EXPECT_EQ(names.size(), static_cast<std::size_t>(kUnaryOps + kBinaryOps));  // all distinct
  EXPECT_EQ(Name(UnaryOp::kNegative), "negative");
  EXPECT_EQ(Name(UnaryOp::kAsinh), "asinh");
  EXPECT_EQ(Name(UnaryOp::kIsFinite), "isfinite");
  EXPECT_EQ(Name(UnaryOp::kLogicalNot), "logical_not");
  EXPECT_EQ(Name(UnaryOp::kBitwiseInvert), "bitwise_invert");
  EXPECT_EQ(Name(BinaryOp::kAdd), "add");
  EXPECT_EQ(Name(BinaryOp::kFloorDivide), "floor_divide");
  EXPECT_EQ(Name(BinaryOp::kLogaddexp), "logaddexp");
  EXPECT_EQ(Name(BinaryOp::kGreaterEqual), "greater_equal");
  EXPECT_EQ(Name(BinaryOp::kBitwiseLeftShift), "bitwise_left_shift");
  EXPECT_EQ(Name(BinaryOp::kBitwiseRightShift), "bitwise_right_shift");
}

TEST(ElementwiseKernels, IntegerArithmeticWraps) {
  using I8 = std::int8_t;
  EXPECT_EQ(Binary<I8>(BinaryOp::kAdd, Of<I8>(127, -128), Of<I8>(1, -1)), Of<I8>(-128, 127));
  EXPECT_EQ(Binary<I8>(BinaryOp::kMultiply, Of<I8>(16, -128), Of<I8>(8, -1)), Of<I8>(-128, -128));
  EXPECT_EQ(Binary<std::uint16_t>(BinaryOp::kSubtract, Of<std::uint16_t>(0), Of<std::uint16_t>(1)),
            Of<std::uint16_t>(65535));
  EXPECT_EQ(Binary<std::uint16_t>(BinaryOp::kMultiply, Of<std::uint16_t>(65535),
                                  Of<std::uint16_t>(65535)),
            Of<std::uint16_t>(1));  // no overflow of a promoted int on the way
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  EXPECT_EQ(Unary<std::int64_t>(UnaryOp::kNegative, Of<std::int64_t>(kMin, 5)),
            Of<std::int64_t>(kMin, -5));
  EXPECT_EQ(Unary<std::int64_t>(UnaryOp::kAbs, Of<std::int64_t>(kMin, -5)),
            Of<std::int64_t>(kMin, 5));
  EXPECT_EQ(Unary<std::uint8_t>(UnaryOp::kNegative, Of<std::uint8_t>(1, 0)),
            Of<std::uint8_t>(255, 0));
  EXPECT_EQ(Unary<std::int32_t>(UnaryOp::kSquare, Of<std::int32_t>(65536, -3)),
            Of<std::int32_t>(0, 9));
}

TEST(ElementwiseKernels, IntegerDivisionRoundsDownAndNeverTraps) {
  using I8 = std::int8_t;
  const auto a = Of<I8>(7, -7, 7, -7, -128, -128, 5, 0);
  const auto b = Of<I8>(2, 2, -2, -2, -1, 1, 0, 0);
  EXPECT_EQ(Binary<I8>(BinaryOp::kFloorDivide, a, b), Of<I8>(3, -4, -4, 3, -128, -128, 0, 0));
  EXPECT_EQ(Binary<I8>(BinaryOp::kRemainder, a, b), Of<I8>(1, 1, -1, -1, 0, 0, 0, 0));
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  EXPECT_EQ(
      Binary<std::int64_t>(BinaryOp::kFloorDivide, Of<std::int64_t>(kMin), Of<std::int64_t>(-1)),
      Of<std::int64_t>(kMin));
  EXPECT_EQ(Binary<std::uint32_t>(BinaryOp::kFloorDivide, Of<std::uint32_t>(7, 7),
                                  Of<std::uint32_t>(2, 0)),
            Of<std::uint32_t>(3, 0));
  // True division of integers is float64.
  const auto quotient = Binary<double>(BinaryOp::kDivide, Of<I8>(1, -1, 0, 7), Of<I8>(0, 0, 0, 2));
  EXPECT_EQ(quotient[0], kInf);
  EXPECT_EQ(quotient[1], -kInf);
  EXPECT_TRUE(std::isnan(quotient[2]));
  EXPECT_EQ(quotient[3], 3.5);
}

TEST(ElementwiseKernels, FloatFloorDivideAndRemainderFollowNumpy) {
  const auto a = Of<double>(7.0, -7.0, 7.0, 1.0, -1.0, 0.0, -1.0, 5.0, -6.0);
  const auto b = Of<double>(-3.0, 3.0, 0.0, 0.0, 0.0, 0.0, kInf, kNaN, 3.0);
  const auto floor_div = Binary<double>(BinaryOp::kFloorDivide, a, b);
  EXPECT_EQ(floor_div[0], -3.0);
  EXPECT_EQ(floor_div[1], -3.0);
  EXPECT_EQ(floor_div[2], kInf);  // x // 0.0 is x / 0.0
  EXPECT_EQ(floor_div[3], kInf);
  EXPECT_EQ(floor_div[4], -kInf);
  EXPECT_TRUE(std::isnan(floor_div[5]));
  EXPECT_EQ(floor_div[6], -1.0);  // numpy: -1.0 // inf == -1.0
  EXPECT_TRUE(std::isnan(floor_div[7]));
  EXPECT_EQ(floor_div[8], -2.0);
  const auto rest = Binary<double>(BinaryOp::kRemainder, a, b);
  EXPECT_EQ(rest[0], -2.0);  // the divisor's sign
  EXPECT_EQ(rest[1], 2.0);
  EXPECT_TRUE(std::isnan(rest[2]));
  EXPECT_EQ(rest[6], kInf);  // numpy: -1.0 % inf == inf
  EXPECT_EQ(rest[8], 0.0);
  EXPECT_FALSE(std::signbit(rest[8]));  // a zero remainder takes the divisor's sign
  // (a - fmod(a, b)) / b falls just under an integer here; numpy snaps it (values from numpy).
  const auto snapped = Binary<double>(BinaryOp::kFloorDivide, Of<double>(5.41, 5.94, -2.51),
                                      Of<double>(0.24, 1.9, -0.37));
  EXPECT_EQ(snapped, Of<double>(22.0, 3.0, 6.0));
  EXPECT_EQ(Binary<double>(BinaryOp::kRemainder, Of<double>(5.41, 5.94, -2.51),
                           Of<double>(0.24, 1.9, -0.37)),
            Of<double>(0.13000000000000034, 0.24000000000000066, -0.2899999999999998));
  const auto negative_zero = Binary<float>(BinaryOp::kRemainder, Of<float>(6.0f), Of<float>(-3.0f));
  EXPECT_EQ(negative_zero[0], 0.0f);
  EXPECT_TRUE(std::signbit(negative_zero[0]));
}

TEST(ElementwiseKernels, Pow) {
  using I32 = std::int32_t;
  EXPECT_EQ(Binary<I32>(BinaryOp::kPow, Of<I32>(2, 0, -1, 3, 7, -2), Of<I32>(10, 0, 3, 0, 2, 3)),
            Of<I32>(1024, 1, -1, 1, 49, -8));
  // numpy: "Integers to negative integer powers are not allowed", even for 1 and -1.
  for (const I32 base : {2, 1, -1, 0}) {
    try {
      Binary<I32>(BinaryOp::kPow, Of<I32>(3, base), Of<I32>(2, -1));
      ADD_FAILURE() << base << " ** -1 gave a result";
    } catch (const InvalidArgument& error) {
      EXPECT_NE(std::string(error.what())
                    .find("Integers to negative integer powers are not "
                          "allowed (as numpy): an exponent of -1 was found"),
                std::string::npos)
          << error.what();
    }
  }
  EXPECT_THROW(Binary<std::int64_t>(BinaryOp::kPow, Of<std::int64_t>(1), Of<std::int64_t>(-5)),
               InvalidArgument);
  EXPECT_EQ(Binary<double>(BinaryOp::kPow, Of<double>(2.0), Of<double>(-1.0)), Of<double>(0.5));
  EXPECT_EQ(Binary<std::int8_t>(BinaryOp::kPow, Of<std::int8_t>(3), Of<std::int8_t>(5)),
            Of<std::int8_t>(-13));  // 243 wraps
  EXPECT_EQ(Binary<std::int8_t>(BinaryOp::kPow, Of<bool>(true, false), Of<bool>(false, false)),
            Of<std::int8_t>(1, 1));  // bool computes in int8, as numpy
  const auto real =
      Binary<double>(BinaryOp::kPow, Of<double>(2.0, -8.0, 0.0), Of<double>(0.5, 1.0 / 3, 0.0));
  EXPECT_DOUBLE_EQ(real[0], std::sqrt(2.0));
  EXPECT_TRUE(std::isnan(real[1]));
  EXPECT_EQ(real[2], 1.0);
}

TEST(ElementwiseKernels, MaximumAndMinimumPropagateNaN) {
  const auto a = Of<float>(1.0f, kNaN, 3.0f, -0.0f, 0.0f);
  const auto b = Of<float>(kNaN, 1.0f, 2.0f, 0.0f, -0.0f);
  const auto max = Binary<float>(BinaryOp::kMaximum, a, b);
  const auto min = Binary<float>(BinaryOp::kMinimum, a, b);
  EXPECT_TRUE(std::isnan(max[0]) && std::isnan(max[1]) && std::isnan(min[0]) && std::isnan(min[1]));
  EXPECT_EQ(max[2], 3.0f);
  EXPECT_EQ(min[2], 2.0f);
  // Of two equal zeros numpy returns the second.
  EXPECT_FALSE(std::signbit(max[3]));
  EXPECT_TRUE(std::signbit(max[4]));
  EXPECT_FALSE(std::signbit(min[3]));
  EXPECT_TRUE(std::signbit(min[4]));
  EXPECT_EQ(Binary<bool>(BinaryOp::kMaximum, Of<bool>(false, true), Of<bool>(false, false)),
            Of<bool>(false, true));
}

TEST(ElementwiseKernels, CopysignSeesNegativeZero) {
  const auto result = Binary<double>(BinaryOp::kCopysign, Of<double>(1.0, -2.0, 3.0, kNaN),
                                     Of<double>(-0.0, 0.0, -kInf, -1.0));
  EXPECT_EQ(result[0], -1.0);
  EXPECT_EQ(result[1], 2.0);
  EXPECT_EQ(result[2], -3.0);
  EXPECT_TRUE(std::isnan(result[3]) && std::signbit(result[3]));
  // On integers it computes in their float type: int16 -> float32.
  EXPECT_EQ(Binary<float>(BinaryOp::kCopysign, Of<std::int16_t>(5), Of<std::int16_t>(-1)),
            Of<float>(-5.0f));
}

TEST(ElementwiseKernels, ShiftsOutOfRange) {
  using I8 = std::int8_t;
  const auto value = Of<I8>(1, 1, 1, -1, -128, 64, 3);
  const auto count = Of<I8>(7, 8, -1, 3, 9, 1, 100);
  EXPECT_EQ(Binary<I8>(BinaryOp::kBitwiseLeftShift, value, count),
            Of<I8>(-128, 0, 0, -8, 0, -128, 0));
  EXPECT_EQ(Binary<I8>(BinaryOp::kBitwiseRightShift, value, count), Of<I8>(0, 0, 0, -1, -1, 32, 0));
  using U64 = std::uint64_t;
  EXPECT_EQ(Binary<U64>(BinaryOp::kBitwiseLeftShift, Of<U64>(1, 1, 3), Of<U64>(63, 64, 1)),
            Of<U64>(U64{1} << 63, 0, 6));
  EXPECT_EQ(Binary<U64>(BinaryOp::kBitwiseRightShift, Of<U64>(~U64{0}, ~U64{0}), Of<U64>(63, 64)),
            Of<U64>(1, 0));
}

TEST(ElementwiseKernels, RoundingHalfToEvenAndIntegerIdentity) {
  EXPECT_EQ(Unary<double>(UnaryOp::kRound, Of<double>(0.5, 1.5, 2.5, -2.5, -0.4, 3.7)),
            Of<double>(0.0, 2.0, 2.0, -2.0, -0.0, 4.0));
  EXPECT_TRUE(std::signbit(Unary<double>(UnaryOp::kRound, Of<double>(-0.4))[0]));
  EXPECT_EQ(Unary<float>(UnaryOp::kRound, Of<float>(0.5f, 1.5f, 2.5f)),
            Of<float>(0.0f, 2.0f, 2.0f));
  EXPECT_EQ(Unary<float>(UnaryOp::kFloor, Of<float>(-0.5f, 1.5f)), Of<float>(-1.0f, 1.0f));
  EXPECT_EQ(Unary<float>(UnaryOp::kCeil, Of<float>(-0.5f, 1.5f)), Of<float>(-0.0f, 2.0f));
  EXPECT_EQ(Unary<float>(UnaryOp::kTrunc, Of<float>(-1.5f, 1.5f)), Of<float>(-1.0f, 1.0f));
  constexpr std::int64_t kBig = (std::int64_t{1} << 53) + 1;  // not exact as a double
  for (UnaryOp op : {UnaryOp::kFloor, UnaryOp::kCeil, UnaryOp::kTrunc, UnaryOp::kRound}) {
    EXPECT_EQ(Unary<std::int64_t>(op, Of<std::int64_t>(kBig, -7)), Of<std::int64_t>(kBig, -7));
    EXPECT_EQ(Unary<bool>(op, Of<bool>(true, false)), Of<bool>(true, false));
  }
}

TEST(ElementwiseKernels, SignAndPredicates) {
  EXPECT_EQ(Unary<std::uint8_t>(UnaryOp::kSign, Of<std::uint8_t>(0, 200)), Of<std::uint8_t>(0, 1));
  EXPECT_EQ(Unary<std::int16_t>(UnaryOp::kSign, Of<std::int16_t>(-300, 0, 5)),
            Of<std::int16_t>(-1, 0, 1));
  const auto sign = Unary<double>(UnaryOp::kSign, Of<double>(-0.0, kNaN, -kInf));
  EXPECT_EQ(sign[0], 0.0);
  EXPECT_TRUE(std::isnan(sign[1]));
  EXPECT_EQ(sign[2], -1.0);
  const auto values = Of<float>(1.0f, kNaN, kInf, -kInf);
  EXPECT_EQ(Unary<bool>(UnaryOp::kIsNan, values), Of<bool>(false, true, false, false));
  EXPECT_EQ(Unary<bool>(UnaryOp::kIsInf, values), Of<bool>(false, false, true, true));
  EXPECT_EQ(Unary<bool>(UnaryOp::kIsFinite, values), Of<bool>(true, false, false, false));
  EXPECT_EQ(Unary<bool>(UnaryOp::kIsFinite, Of<std::int32_t>(-1)), Of<bool>(true));
  EXPECT_EQ(Unary<bool>(UnaryOp::kIsNan, Of<std::uint64_t>(0)), Of<bool>(false));
  // Logical ops treat any nonzero (NaN included) as true.
  EXPECT_EQ(Unary<bool>(UnaryOp::kLogicalNot, Of<double>(0.0, -0.0, kNaN, 2.0)),
            Of<bool>(true, true, false, false));
  EXPECT_EQ(
      Binary<bool>(BinaryOp::kLogicalXor, Of<std::int8_t>(0, 3, 3), Of<std::int8_t>(-2, 7, 0)),
      Of<bool>(true, false, true));
  EXPECT_EQ(Unary<bool>(UnaryOp::kBitwiseInvert, Of<bool>(true, false)), Of<bool>(false, true));
  EXPECT_EQ(Unary<std::uint8_t>(UnaryOp::kBitwiseInvert, Of<std::uint8_t>(0, 0x0F)),
            Of<std::uint8_t>(0xFF, 0xF0));
}

TEST(ElementwiseKernels, ComparisonsWithNaN) {
  const auto a = Of<double>(kNaN, 1.0, -0.0);
  const auto b = Of<double>(kNaN, kNaN, 0.0);
  EXPECT_EQ(Binary<bool>(BinaryOp::kEqual, a, b), Of<bool>(false, false, true));
  EXPECT_EQ(Binary<bool>(BinaryOp::kNotEqual, a, b), Of<bool>(true, true, false));
  EXPECT_EQ(Binary<bool>(BinaryOp::kLessEqual, a, b), Of<bool>(false, false, true));
  EXPECT_EQ(Binary<bool>(BinaryOp::kGreater, a, b), Of<bool>(false, false, false));
}

TEST(ElementwiseKernels, MathOnIntegersComputesInTheirFloatType) {
  // The kernel for an int8 input reads int8 and writes float32 (numpy: float16).
  const auto result = Unary<float>(UnaryOp::kExp, Of<std::int8_t>(0, 1, -128));
  EXPECT_EQ(result[0], 1.0f);
  EXPECT_FLOAT_EQ(result[1], 2.7182817f);
  EXPECT_EQ(result[2], 0.0f);  // e^-128 underflows float32
  const auto wide = Unary<double>(UnaryOp::kSqrt, Of<std::uint32_t>(4294967295u));
  EXPECT_DOUBLE_EQ(wide[0], 65535.99999237060);
  const auto logs = Binary<double>(BinaryOp::kLogaddexp, Of<double>(0.0, kInf, -kInf, 1000.0),
                                   Of<double>(0.0, kInf, -kInf, 1000.0));
  constexpr double kLn2 = 0.6931471805599453;
  EXPECT_DOUBLE_EQ(logs[0], kLn2);
  EXPECT_EQ(logs[1], kInf);
  EXPECT_EQ(logs[2], -kInf);
  EXPECT_DOUBLE_EQ(logs[3], 1000.0 + kLn2);  // no overflow in exp(1000)
}

// A vectorized loop must give what the same kernel gives one element at a time (its
// scalar tail), at every length and alignment: 67 elements of mixed edge values.
TEST(ElementwiseKernels, WholeArraysEqualElementByElement) {
  constexpr std::int64_t kCount = 67;
  auto fill = [](DType dtype, int salt) {
    std::vector<std::byte> bytes(static_cast<std::size_t>(kCount * dtype.itemsize()));
    VisitDType(dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      for (std::int64_t index = 0; index < kCount; ++index) {
        const double specials[] = {0.0, -0.0, 1.0, -1.0, kNaN, kInf, -kInf, 0.5, 1e6, -3.0, 255.0};
        const std::int64_t mixed = (index * 7919 + salt * 104729) % 1000 - 500;
        const double value =
            index % 3 == 0 ? specials[(index / 3 + salt) % 11] : static_cast<double>(mixed) / 8.0;
        const T element = CastElement<T>(value);
        std::memcpy(bytes.data() + index * dtype.itemsize(), &element, sizeof(T));
      }
    });
    return bytes;
  };
  auto same_bytes = [](const std::byte* a, const std::byte* b, std::int64_t size) {
    return std::memcmp(a, b, static_cast<std::size_t>(size)) == 0;
  };
  for (DType dtype : kAllDTypes) {
    const std::vector<std::byte> a = fill(dtype, 1);
    const std::vector<std::byte> b = fill(dtype, 2);
    for (int raw = 0; raw < kUnaryOps + kBinaryOps; ++raw) {
      const bool unary = raw < kUnaryOps;
      Signature signature{bool_, bool_};
      try {
        signature = unary ? ResolveUnary(static_cast<UnaryOp>(raw), dtype)
                          : ResolveBinary(static_cast<BinaryOp>(raw - kUnaryOps), dtype, dtype);
      } catch (const InvalidArgument&) {
        continue;
      }
      const std::int64_t out_size = signature.output.itemsize();
      std::vector<std::byte> whole(static_cast<std::size_t>(kCount * out_size));
      std::vector<std::byte> single(whole.size());
      const std::int64_t in_size = dtype.itemsize();
      if (unary) {
        const UnaryKernel kernel = GetUnaryKernel(static_cast<UnaryOp>(raw), dtype);
        kernel(a.data(), whole.data(), kCount);
        for (std::int64_t i = 0; i < kCount; ++i) {
          kernel(a.data() + i * in_size, single.data() + i * out_size, 1);
        }
      } else {
        const auto op = static_cast<BinaryOp>(raw - kUnaryOps);
        const BinaryKernel kernel = GetBinaryKernel(op, dtype);
        // Integers to negative powers throw (ElementwiseKernels.Pow): -(v + 1) instead.
        std::vector<std::byte> right = b;
        if (op == BinaryOp::kPow && dtype.kind() == DTypeKind::kSignedInt) {
          VisitDType(dtype, [&](auto tag) {
            using T = typename decltype(tag)::type;
            if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
              for (std::int64_t index = 0; index < kCount; ++index) {
                T element;
                std::memcpy(&element, right.data() + index * in_size, sizeof(T));
                if (element < 0) element = static_cast<T>(-(element + 1));
                std::memcpy(right.data() + index * in_size, &element, sizeof(T));
              }
            }
          });
        }
        kernel(a.data(), right.data(), whole.data(), kCount);
        for (std::int64_t i = 0; i < kCount; ++i) {
          kernel(a.data() + i * in_size, right.data() + i * in_size, single.data() + i * out_size,
                 1);
        }
      }
      EXPECT_TRUE(same_bytes(whole.data(), single.data(), kCount * out_size))
          << (unary ? Name(static_cast<UnaryOp>(raw))
                    : Name(static_cast<BinaryOp>(raw - kUnaryOps)))
          << " of " << dtype.name();
    }
  }
}

TEST(ElementwiseKernels, OutputMayAliasTheFirstInput) {
  constexpr std::int64_t kCount = 1001;
  std::vector<float> a(kCount);
  std::vector<float> b(kCount);
  for (std::int64_t i = 0; i < kCount; ++i) {
    a[static_cast<std::size_t>(i)] = static_cast<float>(i) * 0.25f - 100.0f;
    b[static_cast<std::size_t>(i)] = static_cast<float>(i % 17) + 1.0f;
  }
  std::vector<float> expected(kCount);
  GetBinaryKernel(BinaryOp::kRemainder, float32)(a.data(), b.data(), expected.data(), kCount);
  std::vector<float> in_place = a;
  GetBinaryKernel(BinaryOp::kRemainder, float32)(in_place.data(), b.data(), in_place.data(),
                                                 kCount);
  EXPECT_EQ(in_place, expected);

  std::vector<float> negated(kCount);
  GetUnaryKernel(UnaryOp::kSquare, float32)(a.data(), negated.data(), kCount);
  in_place = a;
  GetUnaryKernel(UnaryOp::kSquare, float32)(in_place.data(), in_place.data(), kCount);
  EXPECT_EQ(in_place, negated);

  // A cast between dtypes of one size may write over its input.
  std::vector<std::int32_t> truncated(kCount);
  GetCastKernel(float32, int32)(a.data(), truncated.data(), kCount);
  std::vector<float> buffer = a;
  GetCastKernel(float32, int32)(buffer.data(), buffer.data(), kCount);
  std::vector<std::int32_t> reread(kCount);
  std::memcpy(reread.data(), buffer.data(), sizeof(std::int32_t) * kCount);
  EXPECT_EQ(reread, truncated);
  EXPECT_EQ(truncated[1], -99);  // -99.75 truncates toward zero
}

TEST(ElementwiseKernels, WhereSelectsPerElementForEverySize) {
  const bool condition[] = {true, false, false, true, true};
  const auto check = [&](auto a, auto b) {
    using T = typename decltype(a)::value_type;
    std::array<T, 5> out{};
    GetWhereKernel(DTypeOf<T>())(condition, a.data(), b.data(), out.data(), 5);
    EXPECT_EQ(out, (std::array<T, 5>{a[0], b[1], b[2], a[3], a[4]})) << DTypeOf<T>().name();
  };
  check(Of<bool>(true, true, true, true, true), Of<bool>(false, false, false, false, false));
  check(Of<std::int8_t>(1, 2, 3, 4, 5), Of<std::int8_t>(-1, -2, -3, -4, -5));
  check(Of<std::uint16_t>(1, 2, 3, 4, 5), Of<std::uint16_t>(9, 8, 7, 6, 65535));
  check(Of<float>(1.5f, 2, 3, 4, 5), Of<float>(-1, -2, -3, -4, -5));
  check(Of<std::int64_t>(1, 2, 3, 4, std::numeric_limits<std::int64_t>::min()),
        Of<std::int64_t>(-1, -2, -3, -4, -5));
  // Bits move unchanged: a NaN keeps its payload.
  const double payload_nan = std::bit_cast<double>(std::uint64_t{0x7FF8'0000'0000'1234});
  std::array<double, 1> out{};
  const bool pick_a[] = {true};
  const double a[] = {payload_nan};
  const double b[] = {0.0};
  GetWhereKernel(float64)(pick_a, a, b, out.data(), 1);
  EXPECT_EQ(std::bit_cast<std::uint64_t>(out[0]), 0x7FF8'0000'0000'1234u);
}

TEST(ElementwiseKernels, CastsSaturateAndCopy) {
  const auto from = Of<double>(kNaN, 1e10, -1e10, 2.9, -2.9);
  std::array<std::int32_t, 5> as_int{};
  GetCastKernel(float64, int32)(from.data(), as_int.data(), 5);
  EXPECT_EQ(as_int, Of<std::int32_t>(0, 2147483647, -2147483648LL, 2, -2));
  std::array<std::uint8_t, 5> as_uint8{};
  GetCastKernel(float64, uint8)(from.data(), as_uint8.data(), 5);
  EXPECT_EQ(as_uint8, Of<std::uint8_t>(0, 255, 0, 2, 0));
  std::array<bool, 5> as_bool{};
  GetCastKernel(float64, bool_)(from.data(), as_bool.data(), 5);
  EXPECT_EQ(as_bool, Of<bool>(true, true, true, true, true));
  std::array<double, 5> copy{};
  GetCastKernel(float64, float64)(from.data(), copy.data(), 5);
  EXPECT_TRUE(std::isnan(copy[0]));
  EXPECT_EQ(copy[4], -2.9);
  const auto wide = Of<std::int64_t>(300, -1);
  std::array<std::uint8_t, 2> narrow{};
  GetCastKernel(int64, uint8)(wide.data(), narrow.data(), 2);
  EXPECT_EQ(narrow, Of<std::uint8_t>(44, 255));
}

}  // namespace
}  // namespace tessera::kernels
