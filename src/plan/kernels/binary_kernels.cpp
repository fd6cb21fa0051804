// Binary elementwise ops: their numpy semantics (one struct each, see elementwise_ops.hpp),
// signatures and loops.
#include <cmath>
#include <complex>
#include <concepts>
#include <cstdlib>
#include <functional>
#include <limits>
#include <numbers>
#include <string>
#include <type_traits>

#include "elementwise_kernels.hpp"
#include "elementwise_ops.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/core/type_promotion.hpp"
#include "vector_math.hpp"

namespace tessera::kernels {
namespace {

using detail::Boolean;
using detail::Complex;
using detail::Integer;
using detail::Number;
using detail::Numeric;
using detail::Real;

// Numbers, and bool where the op names a bool function.
// clang-format off
template <class T, class BoolFn>
concept ArithmeticOperand = Numeric<T> || (Boolean<T> && !std::is_void_v<BoolFn>);
// clang-format on

// add, subtract, multiply: Fn wrapping on integers; on bool, BoolFn (void: undefined);
// complex multiplication as numpy (detail::ComplexMultiply).
template <class Fn, class BoolFn>
struct Arithmetic {
  template <ArithmeticOperand<BoolFn> T>
  static T Apply(T a, T b) {
    if constexpr (Boolean<T>) {
      return BoolFn{}(a, b);
    } else if constexpr (Integer<T>) {
      return detail::Wrap<Fn>(a, b);
    } else if constexpr (Complex<T> && std::is_same_v<Fn, std::multiplies<>>) {
      return detail::ComplexMultiply(a, b);
    } else {
      return Fn{}(a, b);
    }
  }
};

// True division; integer and bool operands compute in float64 (numpy's only loop);
// complex division by Smith's method (detail::ComplexDivide).
struct Divide {
  template <detail::Inexact T>
  static T Apply(T a, T b) {
    if constexpr (Complex<T>) {
      return detail::ComplexDivide(a, b);
    } else {
      return a / b;
    }
  }
};

// numpy's npy_divmod: the floor quotient, and the remainder with the divisor's sign
// in *modulus. REQUIRES: b != 0.
template <Real T>
T FloorDivmod(T a, T b, T* modulus) {
  T mod = std::fmod(a, b);
  T div = (a - mod) / b;  // very nearly an integer
  if (mod != 0) {
    if (std::isless(b, T{0}) != std::isless(mod, T{0})) {
      mod += b;
      div -= T{1};
    }
  } else {
    mod = std::copysign(T{0}, b);
  }
  T floor_div;
  if (div != 0) {
    floor_div = std::floor(div);
    if (std::isgreater(div - floor_div, T{0.5})) floor_div += T{1};  // snap to the integer
  } else {
    floor_div = std::copysign(T{0}, a / b);
  }
  *modulus = mod;
  return floor_div;
}

struct FloorDivide {
  template <Number T>
  static T Apply(T a, T b) {
    if constexpr (Real<T>) {
      T mod;
      return b == 0 ? a / b : FloorDivmod(a, b, &mod);  // x // 0.0 is inf or nan
    } else {
      if (b == 0) return T{0};
      if constexpr (std::is_signed_v<T>) {
        if (b == -1) return detail::Wrap<std::minus<>>(T{0}, a);  // INT_MIN // -1 wraps
      }
      const T quotient = static_cast<T>(a / b);
      const bool inexact = static_cast<T>(a % b) != 0;
      return inexact && ((a < 0) != (b < 0)) ? static_cast<T>(quotient - 1) : quotient;
    }
  }
};

struct Remainder {
  template <Number T>
  static T Apply(T a, T b) {
    if constexpr (Real<T>) {
      T mod = std::fmod(a, b);  // nan for b == 0
      if (b != 0) FloorDivmod(a, b, &mod);
      return mod;
    } else {
      if (b == 0) return T{0};
      if constexpr (std::is_signed_v<T>) {
        if (b == -1) return T{0};  // INT_MIN % -1 would overflow
      }
      const T rest = static_cast<T>(a % b);
      return rest != 0 && ((rest < 0) != (b < 0)) ? static_cast<T>(rest + b) : rest;
    }
  }
};

// numpy's npy_cpow: exact powers for small integer exponents (by squaring, with
// numpy's multiplication), 0 ** z as numpy gives it, and C's cpow otherwise.
template <Complex T>
T ComplexPower(T base, T exponent) {
  using R = typename T::value_type;
  if (exponent == T{}) return T{1};
  if (base == T{}) {
    if (exponent.imag() == 0 && exponent.real() > 0) return T{};
    const R nan = std::numeric_limits<R>::quiet_NaN();
    return {nan, nan};
  }
  if (exponent.imag() == 0 && exponent.real() == std::trunc(exponent.real()) &&
      std::abs(exponent.real()) < 100) {
    const auto power = static_cast<int>(exponent.real());
    T result{1};
    T square = base;
    for (unsigned bits = static_cast<unsigned>(power < 0 ? -power : power); bits != 0; bits >>= 1) {
      if (bits & 1u) result = detail::ComplexMultiply(result, square);
      square = detail::ComplexMultiply(square, square);
    }
    return power < 0 ? detail::ComplexDivide(T{1}, result) : result;
  }
  return std::pow(base, exponent);
}

struct Pow {
  template <Numeric T>
  static T Apply(T base, T exponent) {
    if constexpr (Complex<T>) {
      return ComplexPower(base, exponent);
    } else if constexpr (Real<T>) {
      return std::pow(base, exponent);
    } else {
      if constexpr (std::is_signed_v<T>) {
        if (exponent < 0) return T{0};  // never reached: BinaryLoop raises first, as numpy
      }
      T result = 1;  // by squaring, wrapping as numpy
      for (auto bits = static_cast<std::make_unsigned_t<T>>(exponent); bits != 0; bits >>= 1) {
        if (bits & 1u) result = detail::Wrap<std::multiplies<>>(result, base);
        base = detail::Wrap<std::multiplies<>>(base, base);
      }
      return result;
    }
  }
};

// maximum (kMax) and minimum as numpy's SIMD loops: NaN propagates from either
// operand, and of two equal values (0.0 and -0.0) the second is returned.
template <bool kMax>
struct Extremum {
  template <detail::Ordered T>
  static T Apply(T a, T b) {
    const bool take_a = kMax ? a > b : a < b;
    if constexpr (Real<T>) {
      return take_a || std::isnan(a) ? a : b;
    } else {
      return take_a ? a : b;
    }
  }
};

// atan2, hypot, copysign: Fn on floats; integer and bool operands compute in FloatFor.
template <class Fn>
struct Math {
  template <Real T>
  static T Apply(T a, T b) {
    return Fn{}(a, b);
  }
};

// numpy's npy_logaddexp: log(exp(a) + exp(b)) without overflow.
struct LogAddExpFn {
  template <Real T>
  T operator()(T a, T b) const {
    if (a == b) return a + std::numbers::ln2_v<T>;  // also infinities of one sign
    const T difference = a - b;
    if (difference > 0) return a + std::log1p(std::exp(-difference));
    if (difference <= 0) return b + std::log1p(std::exp(difference));
    return difference;  // NaN
  }
};

// ==, <, ...: Fn on the operands (complex numbers have == and != only); logical_and,
// ...: Fn on (operand != 0).
template <class T, class Fn>
concept ComparableBy = std::is_invocable_r_v<bool, Fn, T, T>;

template <class Fn>
struct Compare {
  template <ComparableBy<Fn> T>
  static bool Apply(T a, T b) {
    return Fn{}(a, b);
  }
};
template <class Fn>
struct Logical {
  template <class T>
  static bool Apply(T a, T b) {
    return Fn{}(a != T{0}, b != T{0});
  }
};

template <class Fn>
struct Bitwise {
  template <std::integral T>  // bool included
  static T Apply(T a, T b) {
    return static_cast<T>(Fn{}(a, b));
  }
};

// Shifts by a count outside [0, bits) give 0, or -1 for a right shift of a negative
// value (numpy's npy_lshift/npy_rshift).
template <bool kLeft>
struct Shift {
  template <Integer T>
  static T Apply(T a, T count) {
    constexpr auto kBits =
        static_cast<std::uint64_t>(std::numeric_limits<std::make_unsigned_t<T>>::digits);
    // A negative count converts to a huge unsigned one: one comparison checks both ends.
    const bool in_range = static_cast<std::uint64_t>(count) < kBits;
    if constexpr (kLeft) {
      return in_range ? static_cast<T>(static_cast<detail::WrapType<T>>(a) << count) : T{0};
    } else {
      return in_range ? static_cast<T>(a >> count) : (a < 0 ? static_cast<T>(-1) : T{0});
    }
  }
};

// clang-format off
using Add = Arithmetic<std::plus<>, std::logical_or<>>;
using Subtract = Arithmetic<std::minus<>, void>;
using Multiply = Arithmetic<std::multiplies<>, std::logical_and<>>;
using Maximum = Extremum<true>;
using Minimum = Extremum<false>;
using Atan2 = Math<decltype([](auto a, auto b) { return std::atan2(a, b); })>;
using Hypot = Math<decltype([](auto a, auto b) { return std::hypot(a, b); })>;
using Logaddexp = Math<LogAddExpFn>;
using Copysign = Math<decltype([](auto a, auto b) { return std::copysign(a, b); })>;
using Equal = Compare<std::equal_to<>>;
using NotEqual = Compare<std::not_equal_to<>>;
using Less = Compare<std::less<>>;
using LessEqual = Compare<std::less_equal<>>;
using Greater = Compare<std::greater<>>;
using GreaterEqual = Compare<std::greater_equal<>>;
using LogicalAnd = Logical<std::logical_and<>>;
using LogicalOr = Logical<std::logical_or<>>;
using LogicalXor = Logical<std::not_equal_to<>>;
using BitwiseAnd = Bitwise<std::bit_and<>>;
using BitwiseOr = Bitwise<std::bit_or<>>;
using BitwiseXor = Bitwise<std::bit_xor<>>;
using BitwiseLeftShift = Shift<true>;
using BitwiseRightShift = Shift<false>;
// clang-format on

template <class Op, class T>
concept DefinedFor = requires(typename Op::template Compute<T> x) {
  Op::Apply(x, x);
};

// Calls fn(Op{}) with the kernel struct of `op` under the type rule of its row.
template <class Fn>
decltype(auto) VisitBinaryOp(BinaryOp op, Fn&& fn) {
  switch (op) {
#define TESSERA_BINARY_OP(name, Kernel, aliases, rule, complex, doc) \
  case BinaryOp::k##Kernel:                                          \
    return fn(detail::Ruled<2, Kernel, TypeRule::rule, ComplexRule::complex>{});
#include "tessera/plan/internal/elementwise_ops.def"
  }
  std::abort();  // not an enumerator of elementwise_ops.def
}

template <class T>
[[noreturn]] void NegativeIntegerPower(T exponent) {
  throw InvalidArgument(
      "pow: Integers to negative integer powers are not allowed (as numpy): an exponent of " +
      std::to_string(static_cast<long long>(exponent)) +
      " was found for an integer base; cast to a float first, e.g. astype(x, float64) ** y");
}

template <class Op, class In>
void BinaryLoop(const void* a, const void* b, void* out, std::int64_t n) {
  using Compute = typename Op::template Compute<In>;
  using Out = decltype(Op::Apply(Compute{}, Compute{}));
  const In* __restrict left = static_cast<const In*>(a);
  const In* __restrict right = static_cast<const In*>(b);
  Out* __restrict target = static_cast<Out*>(out);
  if constexpr (std::is_base_of_v<Pow, Op> && std::is_signed_v<Compute> &&
                std::is_integral_v<Compute>) {
    // numpy raises rather than compute an integer to a negative power; checked before
    // the loop, which stays free of branches that leave it.
    for (std::int64_t i = 0; i < n; ++i) {
      if (static_cast<Compute>(right[i]) < 0) NegativeIntegerPower(right[i]);
    }
  }
  for (std::int64_t i = 0; i < n; ++i) {
    target[i] = Op::Apply(static_cast<Compute>(left[i]), static_cast<Compute>(right[i]));
  }
}

}  // namespace

Signature ResolveBinary(BinaryOp op, DType a, DType b) {
  return VisitBinaryOp(op, [&](auto op_tag) {
    using Op = decltype(op_tag);
    // The float functions pick a float for each operand first (numpy: atan2(int8, uint16)
    // is float32, where int8 and uint16 alone would promote to int32).
    const DType promoted = Op::kTypeRule == TypeRule::kFloat
                               ? ResultType(FloatingResultType(a), FloatingResultType(b))
                               : ResultType(a, b);
    return VisitDType(promoted, [&](auto tag) -> Signature {
      using T = typename decltype(tag)::type;
      if constexpr (DefinedFor<Op, T>) {
        using Compute = typename Op::template Compute<T>;
        return {DTypeOf<Compute>(), DTypeOf<decltype(Op::Apply(Compute{}, Compute{}))>()};
      } else {
        const std::string dtypes = a == b ? std::string(a.name())
                                          : std::string(a.name()) + " and " +
                                                std::string(b.name()) + " (which promote to " +
                                                std::string(promoted.name()) + ")";
        throw detail::NotDefined(
            Name(op), dtypes,
            promoted.is_complex() ? "complex numbers have no order; apply it to real(x), imag(x) "
                                    "or abs(x)"
            : op == BinaryOp::kSubtract ? "use logical_xor for booleans, or cast with astype first"
                                        : "cast with astype first");
      }
    });
  });
}

BinaryKernel GetBinaryKernel(BinaryOp op, DType input) {
  ResolveBinary(op, input, input);  // throws when undefined
  if (const BinaryKernel vector = VectorBinaryKernel(op, input)) return vector;
  return VisitBinaryOp(op, [&](auto op_tag) {
    using Op = decltype(op_tag);
    return VisitDType(input, [](auto tag) -> BinaryKernel {
      using T = typename decltype(tag)::type;
      if constexpr (DefinedFor<Op, T>) {
        return &BinaryLoop<Op, T>;
      } else {
        return nullptr;  // unreachable: ResolveBinary threw
      }
    });
  });
}

}  // namespace tessera::kernels
