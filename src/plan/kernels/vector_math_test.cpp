// Vector math against glibc: every covered op, float32 and float64, on each instruction
// set this CPU has, for random inputs across each function's domain, the values where
// C99 fixes the result (+-0, +-inf, NaN, domain edges) and every tail length. SLEEF's
// functions are within 1 ulp and glibc's within 1, so results may differ by 2 ulp;
// sqrt is correctly rounded in both and must match bit for bit. NaN matches any NaN.
// (Against numpy's own results: python/tests/test_vector_math.py.)
#include "vector_math.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tessera/core/scalar.hpp"
#include "test_seed.hpp"
#include "vector_math_isa.hpp"

namespace tessera::kernels {
namespace {

using Isa = vector_detail::InstructionSet;
using vector_detail::SupportedInstructionSets;

// Distance in representable values; +0 and -0 are the same value (0 apart).
template <class T>
std::int64_t UlpDistance(T a, T b) {
  using Bits = std::conditional_t<sizeof(T) == 4, std::int32_t, std::int64_t>;
  auto ordered = [](T x) {
    const auto bits = static_cast<std::int64_t>(std::bit_cast<Bits>(x));
    return bits < 0 ? std::numeric_limits<Bits>::min() - bits : bits;
  };
  const std::int64_t d = ordered(a) - ordered(b);
  return d < 0 ? -d : d;
}

template <class T>
::testing::AssertionResult Close(T got, T want, std::int64_t ulps) {
  if (std::isnan(want) && std::isnan(got)) return ::testing::AssertionSuccess();
  if (std::isnan(want) || std::isnan(got) || std::isinf(want) || std::isinf(got)) {
    if (got == want) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << got << " instead of " << want;
  }
  const std::int64_t distance = UlpDistance(got, want);
  if (distance <= ulps) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << std::hexfloat << got << " instead of " << want << ": " << distance << " ulp";
}

struct UnaryCase {
  UnaryOp op;
  double low, high;  // random inputs drawn from [low, high]
  double (*reference)(double);
  float (*reference_float)(float);
  std::int64_t ulps;
};

#define TESSERA_REF(fn) [](double x) { return std::fn(x); }, [](float x) { return std::fn(x); }
std::vector<UnaryCase> UnaryCases() {
  return {
      {UnaryOp::kExp, -100, 100, TESSERA_REF(exp), 2},
      {UnaryOp::kExpm1, -20, 20, TESSERA_REF(expm1), 2},
      {UnaryOp::kLog, 0, 1e30, TESSERA_REF(log), 2},
      {UnaryOp::kLog1p, -1, 1e10, TESSERA_REF(log1p), 2},
      {UnaryOp::kLog2, 0, 1e30, TESSERA_REF(log2), 2},
      {UnaryOp::kLog10, 0, 1e30, TESSERA_REF(log10), 2},
      {UnaryOp::kSin, -1e4, 1e4, TESSERA_REF(sin), 2},
      {UnaryOp::kCos, -1e4, 1e4, TESSERA_REF(cos), 2},
      {UnaryOp::kTan, -1e4, 1e4, TESSERA_REF(tan), 2},
      {UnaryOp::kAsin, -1, 1, TESSERA_REF(asin), 2},
      {UnaryOp::kAcos, -1, 1, TESSERA_REF(acos), 2},
      {UnaryOp::kAtan, -1e6, 1e6, TESSERA_REF(atan), 2},
      {UnaryOp::kSinh, -80, 80, TESSERA_REF(sinh), 2},
      {UnaryOp::kCosh, -80, 80, TESSERA_REF(cosh), 2},
      {UnaryOp::kTanh, -20, 20, TESSERA_REF(tanh), 2},
      {UnaryOp::kAsinh, -1e10, 1e10, TESSERA_REF(asinh), 2},
      {UnaryOp::kAcosh, 1, 1e10, TESSERA_REF(acosh), 2},
      {UnaryOp::kAtanh, -1, 1, TESSERA_REF(atanh), 2},
      {UnaryOp::kSqrt, 0, 1e30, TESSERA_REF(sqrt), 0},
  };
}

struct BinaryCase {
  BinaryOp op;
  double low, high;
  double (*reference)(double, double);
  float (*reference_float)(float, float);
  std::int64_t ulps;
};

#define TESSERA_REF2(fn) \
  [](double x, double y) { return std::fn(x, y); }, [](float x, float y) { return std::fn(x, y); }
std::vector<BinaryCase> BinaryCases() {
  return {
      {BinaryOp::kPow, -10, 10, TESSERA_REF2(pow), 2},
      {BinaryOp::kAtan2, -1e3, 1e3, TESSERA_REF2(atan2), 2},
      {BinaryOp::kHypot, -1e30, 1e30, TESSERA_REF2(hypot), 2},
  };
}

// Values C99 fixes results for, then random ones; an odd count leaves a tail.
template <class T>
std::vector<T> Inputs(std::mt19937_64& rng, double low, double high) {
  constexpr T kInf = std::numeric_limits<T>::infinity();
  std::vector<T> values = {T(0),
                           T(-0.0),
                           T(1),
                           T(-1),
                           T(0.5),
                           T(-0.5),
                           T(2),
                           kInf,
                           -kInf,
                           std::numeric_limits<T>::quiet_NaN(),
                           std::numeric_limits<T>::denorm_min(),
                           std::numeric_limits<T>::min(),
                           std::numeric_limits<T>::max(),
                           static_cast<T>(low),
                           static_cast<T>(high)};
  std::uniform_real_distribution<double> uniform(low, high);
  std::uniform_real_distribution<double> exponent(-40, sizeof(T) == 4 ? 38.5 : 308);
  for (int i = 0; i < 4001; ++i) {
    // Half spread evenly over [low, high], half over every magnitude the type has.
    double x = uniform(rng);
    if (i % 2 == 1) {
      x = std::copysign(std::pow(10.0, exponent(rng)), low < 0 && rng() % 2 ? -1.0 : 1.0);
    }
    values.push_back(static_cast<T>(x));
  }
  return values;
}

template <class T>
void CheckUnary(const Isa& isa, const UnaryCase& c, std::mt19937_64& rng) {
  const UnaryKernel kernel = isa.unary(c.op, std::is_same_v<T, double>);
  ASSERT_NE(kernel, nullptr) << Name(c.op);
  const std::vector<T> in = Inputs<T>(rng, c.low, c.high);
  std::vector<T> out(in.size());
  kernel(in.data(), out.data(), static_cast<std::int64_t>(in.size()));
  for (std::size_t i = 0; i < in.size(); ++i) {
    T want;
    if constexpr (std::is_same_v<T, double>) {
      want = c.reference(in[i]);
    } else {
      want = c.reference_float(in[i]);
    }
    ASSERT_TRUE(Close(out[i], want, c.ulps))
        << isa.name << " " << Name(c.op) << "(" << std::hexfloat << in[i] << ")";
  }
  // Every tail length, in place (out aliasing in).
  for (std::size_t n = 0; n <= 33; ++n) {
    std::vector<T> values(in.begin() + 100, in.begin() + 100 + static_cast<std::ptrdiff_t>(n));
    kernel(values.data(), values.data(), static_cast<std::int64_t>(n));
    for (std::size_t i = 0; i < n; ++i) ASSERT_TRUE(Close(values[i], out[100 + i], 0)) << n;
  }
}

template <class T>
void CheckBinary(const Isa& isa, const BinaryCase& c, std::mt19937_64& rng) {
  const BinaryKernel kernel = isa.binary(c.op, std::is_same_v<T, double>);
  ASSERT_NE(kernel, nullptr) << Name(c.op);
  std::vector<T> a = Inputs<T>(rng, c.low, c.high);
  std::vector<T> b = Inputs<T>(rng, c.low, c.high);
  // Every pairing of the special values, then the random ones in order.
  constexpr std::size_t kSpecial = 15;
  std::vector<T> left, right;
  for (std::size_t i = 0; i < kSpecial; ++i) {
    for (std::size_t j = 0; j < kSpecial; ++j) {
      left.push_back(a[i]);
      right.push_back(b[j]);
    }
  }
  left.insert(left.end(), a.begin() + kSpecial, a.end());
  right.insert(right.end(), b.begin() + kSpecial, b.end());
  std::vector<T> out(left.size());
  kernel(left.data(), right.data(), out.data(), static_cast<std::int64_t>(left.size()));
  for (std::size_t i = 0; i < left.size(); ++i) {
    T want;
    if constexpr (std::is_same_v<T, double>) {
      want = c.reference(left[i], right[i]);
    } else {
      want = c.reference_float(left[i], right[i]);
    }
    ASSERT_TRUE(Close(out[i], want, c.ulps)) << isa.name << " " << Name(c.op) << "("
                                             << std::hexfloat << left[i] << ", " << right[i] << ")";
  }
}

TEST(VectorMath, EveryOpOnEveryInstructionSetOfThisCpuAgreesWithGlibc) {
  const std::vector<Isa>& isas = SupportedInstructionSets();
  if (isas.empty()) GTEST_SKIP() << "this CPU has neither AVX2 with FMA nor AVX-512F";
  std::mt19937_64 rng(testing::TestSeed());
  for (const Isa& isa : isas) {
    for (const UnaryCase& c : UnaryCases()) {
      CheckUnary<float>(isa, c, rng);
      CheckUnary<double>(isa, c, rng);
    }
    for (const BinaryCase& c : BinaryCases()) {
      CheckBinary<float>(isa, c, rng);
      CheckBinary<double>(isa, c, rng);
    }
  }
}

// A lane's result must not depend on the other lanes of its register (SLEEF's trig
// functions take a slower argument reduction for the whole register when one lane is
// large): the same values computed whole and one at a time, bit for bit, so results do
// not change with chunking.
template <class T>
void CheckLanesIndependent(const Isa& isa, UnaryOp op, std::mt19937_64& rng) {
  const UnaryKernel kernel = isa.unary(op, std::is_same_v<T, double>);
  const std::vector<T> in = Inputs<T>(rng, -1e6, 1e6);
  std::vector<T> whole(in.size());
  kernel(in.data(), whole.data(), static_cast<std::int64_t>(in.size()));
  for (std::size_t i = 0; i < in.size(); ++i) {
    T alone;
    kernel(&in[i], &alone, 1);
    ASSERT_TRUE(Close(alone, whole[i], 0))
        << isa.name << " " << Name(op) << "(" << std::hexfloat << in[i] << ") alone";
  }
}

TEST(VectorMath, ALanesResultDoesNotDependOnItsNeighbours) {
  std::mt19937_64 rng(testing::TestSeed());
  for (const Isa& isa : SupportedInstructionSets()) {
    for (const UnaryCase& c : UnaryCases()) {
      CheckLanesIndependent<float>(isa, c.op, rng);
      CheckLanesIndependent<double>(isa, c.op, rng);
    }
  }
}

// Add, subtract, multiply and divide are IEEE's, correctly rounded: bit for bit the
// scalar operators' results (NaN any NaN), special values paired, every tail, in place.
template <class T>
void CheckArithmetic(const Isa& isa, std::mt19937_64& rng) {
  const std::vector<T> a = Inputs<T>(rng, -1e3, 1e3);
  const std::vector<T> b = Inputs<T>(rng, -1e3, 1e3);
  const std::vector<std::pair<BinaryOp, std::function<T(T, T)>>> ops = {
      {BinaryOp::kAdd, std::plus<T>()},
      {BinaryOp::kSubtract, std::minus<T>()},
      {BinaryOp::kMultiply, std::multiplies<T>()},
      {BinaryOp::kDivide, std::divides<T>()}};
  for (const auto& [op, reference] : ops) {
    const BinaryKernel kernel = isa.binary(op, std::is_same_v<T, double>);
    ASSERT_NE(kernel, nullptr) << Name(op);
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{17},
                          std::size_t{33}, a.size()}) {
      std::vector<T> out(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(n));
      kernel(out.data(), b.data(), out.data(), static_cast<std::int64_t>(n));
      for (std::size_t i = 0; i < n; ++i) {
        ASSERT_TRUE(Close(out[i], reference(a[i], b[i]), 0))
            << isa.name << " " << Name(op) << "(" << a[i] << ", " << b[i] << ")";
      }
    }
  }
}

TEST(VectorMath, ArithmeticIsBitForBitTheScalarOperators) {
  std::mt19937_64 rng(testing::TestSeed());
  for (const Isa& isa : SupportedInstructionSets()) {
    CheckArithmetic<float>(isa, rng);
    CheckArithmetic<double>(isa, rng);
  }
}

// astype float -> int: bit for bit the scalar rule (CastElement: NaN -> 0, saturation),
// around both ends of the range, every tail.
template <class From, class To>
void CheckCast(const Isa& isa, std::mt19937_64& rng) {
  const CastKernel kernel = isa.cast(DTypeOf<From>(), DTypeOf<To>());
  if (kernel == nullptr) return;  // not covered on this instruction set
  std::vector<From> in = Inputs<From>(rng, -1e20, 1e20);
  const auto top = static_cast<From>(std::numeric_limits<To>::max());  // rounded up or exact
  for (const From edge : {top, -top, std::nextafter(top, From(0)), std::nextafter(-top, From(0)),
                          std::nextafter(top, std::numeric_limits<From>::infinity()),
                          std::nextafter(-top, -std::numeric_limits<From>::infinity()), From(-0.75),
                          From(0.75), From(-1.5), From(2147483647.5)}) {
    in.insert(in.begin() + 3, edge);
  }
  for (const std::size_t n : {std::size_t{0}, std::size_t{5}, std::size_t{19}, in.size()}) {
    std::vector<To> out(n);
    kernel(in.data(), out.data(), static_cast<std::int64_t>(n));
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(out[i], CastElement<To>(in[i]))
          << isa.name << " " << DTypeOf<From>().name() << " -> " << DTypeOf<To>().name() << " of "
          << std::hexfloat << in[i];
    }
  }
}

TEST(VectorMath, CastsFromFloatToIntegerAreBitForBitTheScalarRule) {
  std::mt19937_64 rng(testing::TestSeed());
  for (const Isa& isa : SupportedInstructionSets()) {
    CheckCast<float, std::int32_t>(isa, rng);
    CheckCast<double, std::int32_t>(isa, rng);
    CheckCast<double, std::int64_t>(isa, rng);
  }
  if (VectorMathIsa() != "none") {
    EXPECT_EQ(GetCastKernel(float32, int32), VectorCastKernel(float32, int32));
    EXPECT_NE(VectorCastKernel(float32, int32), nullptr);
  }
  EXPECT_EQ(VectorCastKernel(int32, float32), nullptr);
}

TEST(VectorMath, KernelsAreThoseOfTheWidestInstructionSetAndOnlyForFloats) {
  const std::vector<Isa>& isas = SupportedInstructionSets();
  const std::string_view widest = isas.empty() ? std::string_view("none") : isas.back().name;
  // TESSERA_VECTOR_MATH may lower the choice, never raise it.
  const char* asked = std::getenv("TESSERA_VECTOR_MATH");
  if (asked == nullptr) {
    EXPECT_EQ(VectorMathIsa(), widest);
  }
  if (VectorMathIsa() != "none") {
    EXPECT_NE(VectorUnaryKernel(UnaryOp::kExp, float32), nullptr);
    EXPECT_NE(VectorBinaryKernel(BinaryOp::kPow, float64), nullptr);
    // The kernels GetUnaryKernel hands out are the vector ones.
    EXPECT_EQ(GetUnaryKernel(UnaryOp::kLog, float64), VectorUnaryKernel(UnaryOp::kLog, float64));
  }
  EXPECT_EQ(VectorUnaryKernel(UnaryOp::kExp, int32), nullptr);
  EXPECT_EQ(VectorUnaryKernel(UnaryOp::kExp, complex64), nullptr);
  EXPECT_EQ(VectorUnaryKernel(UnaryOp::kFloor, float32), nullptr);
  EXPECT_EQ(VectorBinaryKernel(BinaryOp::kAdd, int32), nullptr);
  EXPECT_EQ(VectorBinaryKernel(BinaryOp::kMaximum, float32), nullptr);
}

}  // namespace
}  // namespace tessera::kernels
