#include "tessera/core/type_promotion.hpp"

#include <gtest/gtest.h>

#include <array>
#include <string_view>

namespace tessera {
namespace {

constexpr std::array<DType, 13> kAll = {bool_,   int8,      int16,     int32,  int64,
                                        uint8,   uint16,    uint32,    uint64, float32,
                                        float64, complex64, complex128};

// numpy's one-letter type codes, in kAll's order.
DType FromCode(char code) {
  constexpr std::string_view kCodes = "?bhilBHILfdFD";
  return kAll[kCodes.find(code)];
}

TEST(TypePromotion, MatchesNumpyResultTypeForEveryPair) {
  // Generated once with numpy 2.4:
  //   "".join(np.dtype(np.result_type(a, b)).char for b in types) for a in types
  // (np.dtype('int64').char is 'l', uint64 'L', complex64 'F', complex128 'D').
  constexpr std::array<std::string_view, 13> kNumpy = {
      "?bhilBHILfdFD",  // bool
      "bbhilhildfdFD",  // int8
      "hhhilhildfdFD",  // int16
      "iiiiliildddDD",  // int32
      "lllllllldddDD",  // int64
      "BhhilBHILfdFD",  // uint8
      "HiiilHHILfdFD",  // uint16
      "IllllIIILddDD",  // uint32
      "LddddLLLLddDD",  // uint64
      "fffddffddfdFD",  // float32
      "dddddddddddDD",  // float64
      "FFFDDFFDDFDFD",  // complex64
      "DDDDDDDDDDDDD",  // complex128
  };
  for (std::size_t row = 0; row < kAll.size(); ++row) {
    for (std::size_t column = 0; column < kAll.size(); ++column) {
      SCOPED_TRACE(std::string(kAll[row].name()) + " with " + std::string(kAll[column].name()));
      EXPECT_EQ(ResultType(kAll[row], kAll[column]), FromCode(kNumpy[row][column]));
    }
  }
}

TEST(TypePromotion, NamedCases) {
  EXPECT_EQ(ResultType(bool_, int8), int8);
  EXPECT_EQ(ResultType(int8, uint8), int16);
  EXPECT_EQ(ResultType(int64, uint64), float64);
  EXPECT_EQ(ResultType(int32, float32), float64);
  EXPECT_EQ(ResultType(uint8, float32), float32);
  EXPECT_EQ(ResultType(int16, float32), float32);
  EXPECT_EQ(ResultType(uint32, int32), int64);
  EXPECT_EQ(ResultType(uint16, int8), int32);
}

TEST(TypePromotion, WeakScalarsKeepTheArrayDtypeUnlessOfAHigherKind) {
  // The array's dtype wins when the scalar's kind is not higher (NEP 50).
  for (DType array : kAll) {
    SCOPED_TRACE(array.name());
    EXPECT_EQ(ResultTypeWithScalar(array, ScalarKind::kBool), array);
  }
  EXPECT_EQ(ResultTypeWithScalar(int8, ScalarKind::kInt), int8);
  EXPECT_EQ(ResultTypeWithScalar(uint64, ScalarKind::kInt), uint64);
  EXPECT_EQ(ResultTypeWithScalar(float32, ScalarKind::kInt), float32);
  EXPECT_EQ(ResultTypeWithScalar(float32, ScalarKind::kFloat), float32);
  EXPECT_EQ(ResultTypeWithScalar(float64, ScalarKind::kFloat), float64);
  // Otherwise the scalar's kind brings its default dtype.
  EXPECT_EQ(ResultTypeWithScalar(bool_, ScalarKind::kInt), int64);
  EXPECT_EQ(ResultTypeWithScalar(bool_, ScalarKind::kFloat), float64);
  EXPECT_EQ(ResultTypeWithScalar(int16, ScalarKind::kFloat), float64);
  EXPECT_EQ(ResultTypeWithScalar(uint8, ScalarKind::kFloat), float64);
  // A complex scalar: complex of the array's precision for floats (the standard's rule),
  // complex128 for integers and bool; a complex array takes every scalar.
  EXPECT_EQ(ResultTypeWithScalar(float32, ScalarKind::kComplex), complex64);
  EXPECT_EQ(ResultTypeWithScalar(float64, ScalarKind::kComplex), complex128);
  EXPECT_EQ(ResultTypeWithScalar(int8, ScalarKind::kComplex), complex128);
  EXPECT_EQ(ResultTypeWithScalar(bool_, ScalarKind::kComplex), complex128);
  EXPECT_EQ(ResultTypeWithScalar(complex64, ScalarKind::kComplex), complex64);
  EXPECT_EQ(ResultTypeWithScalar(complex64, ScalarKind::kFloat), complex64);
}

TEST(TypePromotion, FloatingResultType) {
  // numpy's np.sqrt(np.ones(1, t)).dtype, with float16 read as float32.
  EXPECT_EQ(FloatingResultType(bool_), float32);
  EXPECT_EQ(FloatingResultType(int8), float32);
  EXPECT_EQ(FloatingResultType(uint8), float32);
  EXPECT_EQ(FloatingResultType(int16), float32);
  EXPECT_EQ(FloatingResultType(uint16), float32);
  EXPECT_EQ(FloatingResultType(int32), float64);
  EXPECT_EQ(FloatingResultType(uint32), float64);
  EXPECT_EQ(FloatingResultType(int64), float64);
  EXPECT_EQ(FloatingResultType(uint64), float64);
  EXPECT_EQ(FloatingResultType(float32), float32);
  EXPECT_EQ(FloatingResultType(float64), float64);
}

}  // namespace
}  // namespace tessera
