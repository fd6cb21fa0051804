// Unary elementwise ops: their numpy semantics (one struct each, see elementwise_ops.hpp),
// signatures and loops.
#include <cmath>
#include <complex>
#include <concepts>
#include <cstdlib>
#include <functional>
#include <limits>
#include <numbers>

#include "elementwise_kernels.hpp"
#include "elementwise_ops.hpp"
#include "vector_math.hpp"

namespace tessera::kernels {
namespace {

using detail::Boolean;
using detail::Complex;
using detail::Integer;
using detail::Number;
using detail::Numeric;
using detail::Real;

struct Negative {
  template <Numeric T>
  static T Apply(T x) {
    if constexpr (Integer<T>) {
      return detail::Wrap<std::minus<>>(T{0}, x);
    } else {
      return -x;
    }
  }
};

struct Positive {
  template <Numeric T>
  static T Apply(T x) {
    return x;
  }
};

struct Abs {
  template <class T>
  static auto Apply(T x) {
    if constexpr (Complex<T>) {
      return std::abs(x);  // hypot of the parts: no overflow in between
    } else if constexpr (Real<T>) {
      return std::fabs(x);
    } else if constexpr (std::is_signed_v<T>) {
      return x < 0 ? detail::Wrap<std::minus<>>(T{0}, x) : x;  // abs(INT_MIN) == INT_MIN
    } else {
      return T{x};
    }
  }
};

struct Sign {
  template <Numeric T>
  static T Apply(T x) {
    if constexpr (Complex<T>) {
      // The standard's x / |x| as numpy 2 computes it: 0 for 0, NaN for NaN parts; an
      // infinite part gives its sign (NaN when both parts are infinite).
      using R = typename T::value_type;
      constexpr R kNaN = std::numeric_limits<R>::quiet_NaN();
      const R magnitude = std::abs(x);
      if (std::isnan(magnitude)) return {kNaN, kNaN};
      if (std::isinf(magnitude)) {
        const bool real_inf = std::isinf(x.real());
        const bool imag_inf = std::isinf(x.imag());
        if (real_inf && imag_inf) return {kNaN, kNaN};
        if (real_inf) return {std::copysign(R{1}, x.real()), R{0}};
        return {R{0}, std::copysign(R{1}, x.imag())};
      }
      if (magnitude == 0) return T{};
      return {x.real() / magnitude, x.imag() / magnitude};
    } else if constexpr (Real<T>) {
      return x > 0 ? T{1} : (x < 0 ? T{-1} : (x == 0 ? T{0} : x));  // NaN stays NaN
    } else if constexpr (std::is_signed_v<T>) {
      return static_cast<T>(x > 0 ? 1 : (x < 0 ? -1 : 0));
    } else {
      return static_cast<T>(x > 0 ? 1 : 0);
    }
  }
};

struct Square {
  template <Numeric T>
  static T Apply(T x) {
    if constexpr (Integer<T>) {
      return detail::Wrap<std::multiplies<>>(x, x);
    } else if constexpr (Complex<T>) {
      return detail::ComplexMultiply(x, x);
    } else {
      return x * x;
    }
  }
};

// exp, log, sin, ...: Fn on floats and complex numbers (<complex>'s overloads, which
// follow C99's Annex G at branch cuts and infinities, as numpy's do); integer and bool
// operands compute in FloatFor.
template <class Fn>
struct Math {
  template <detail::Inexact T>
  static T Apply(T x) {
    return Fn{}(x);
  }
};

// floor, ceil, trunc, round: Fn on floats, the identity on integers and bool; on complex
// numbers (round only, kRoundsComplex) Fn on each part.
template <class Fn, bool kRoundsComplex>
struct Rounding {
  template <detail::RealUnless<kRoundsComplex> T>
  static T Apply(T x) {
    if constexpr (Complex<T>) {
      return {Fn{}(x.real()), Fn{}(x.imag())};
    } else if constexpr (Real<T>) {
      return Fn{}(x);
    } else {
      return x;
    }
  }
};

// isnan, isinf, isfinite: Fn on floats; integers and bool are never NaN or infinite. A
// complex number is NaN or infinite when either part is (kAnyPart), finite when both
// parts are.
template <class Fn, bool kIntegerResult>
struct Classify {
  template <class T>
  static bool Apply(T x) {
    if constexpr (Complex<T>) {
      return kIntegerResult ? Fn{}(x.real()) && Fn{}(x.imag()) : Fn{}(x.real()) || Fn{}(x.imag());
    } else if constexpr (Real<T>) {
      return Fn{}(x);
    } else {
      return kIntegerResult;
    }
  }
};

// real, imag, conj: the parts and the conjugate of a complex number; on real numbers
// the number itself, zero, and the number itself (numpy's np.real, np.imag, np.conj).
struct RealPart {
  template <class T>
  static auto Apply(T x) {
    if constexpr (Complex<T>) {
      return x.real();
    } else {
      return T{x};
    }
  }
};
struct ImagPart {
  template <class T>
  static auto Apply(T x) {
    if constexpr (Complex<T>) {
      return x.imag();
    } else {
      return T{};
    }
  }
};
struct Conjugate {
  template <class T>
  static T Apply(T x) {
    if constexpr (Complex<T>) {
      return std::conj(x);
    } else {
      return x;
    }
  }
};

// expm1, log1p and log2 of a complex number, which <complex> lacks; accurate near 0
// where exp(z) - 1 and log(1 + z) would cancel.
struct ComplexExpm1 {
  template <Complex T>
  T operator()(T z) const {
    using R = typename T::value_type;
    const R half_sin = std::sin(z.imag() / 2);
    // exp(x + iy) - 1 = (expm1(x) cos y + (cos y - 1)) + i exp(x) sin y, cos y - 1 = -2 sin^2(y/2)
    return {std::expm1(z.real()) * std::cos(z.imag()) - 2 * half_sin * half_sin,
            std::exp(z.real()) * std::sin(z.imag())};
  }
};
struct ComplexLog1p {
  template <Complex T>
  T operator()(T z) const {
    using R = typename T::value_type;
    const R x = z.real();
    const R y = z.imag();
    // |1 + z|^2 = 1 + (2x + x^2 + y^2): log1p of the bracket keeps small z exact.
    if (std::isfinite(x) && std::isfinite(y) && std::abs(x) < R{0.5} && std::abs(y) < R{0.5}) {
      return {std::log1p(x * (2 + x) + y * y) / 2, std::atan2(y, 1 + x)};
    }
    return std::log(T(1 + x, y));
  }
};

struct LogicalNot {
  template <class T>
  static bool Apply(T x) {
    return x == T{0};
  }
};

struct BitwiseInvert {
  template <std::integral T>  // bool included
  static T Apply(T x) {
    if constexpr (Boolean<T>) {
      return !x;
    } else {
      return static_cast<T>(~x);
    }
  }
};

// The ops that apply a <cmath> function: Fn{}(x) on the compute type (float -> expf).
// clang-format off
using Sqrt = Math<decltype([](auto x) { return std::sqrt(x); })>;
using Exp = Math<decltype([](auto x) { return std::exp(x); })>;
using Expm1 = Math<decltype([]<class T>(T x) {
  if constexpr (Complex<T>) return ComplexExpm1{}(x); else return std::expm1(x);
})>;
using Log = Math<decltype([](auto x) { return std::log(x); })>;
using Log1p = Math<decltype([]<class T>(T x) {
  if constexpr (Complex<T>) return ComplexLog1p{}(x); else return std::log1p(x);
})>;
using Log2 = Math<decltype([]<class T>(T x) {
  if constexpr (Complex<T>) {
    return T(std::log(x) / std::numbers::ln2_v<typename T::value_type>);
  } else {
    return std::log2(x);
  }
})>;
using Log10 = Math<decltype([](auto x) { return std::log10(x); })>;
using Sin = Math<decltype([](auto x) { return std::sin(x); })>;
using Cos = Math<decltype([](auto x) { return std::cos(x); })>;
using Tan = Math<decltype([](auto x) { return std::tan(x); })>;
using Asin = Math<decltype([](auto x) { return std::asin(x); })>;
using Acos = Math<decltype([](auto x) { return std::acos(x); })>;
using Atan = Math<decltype([](auto x) { return std::atan(x); })>;
using Sinh = Math<decltype([](auto x) { return std::sinh(x); })>;
using Cosh = Math<decltype([](auto x) { return std::cosh(x); })>;
using Tanh = Math<decltype([](auto x) { return std::tanh(x); })>;
using Asinh = Math<decltype([](auto x) { return std::asinh(x); })>;
using Acosh = Math<decltype([](auto x) { return std::acosh(x); })>;
using Atanh = Math<decltype([](auto x) { return std::atanh(x); })>;
using Floor = Rounding<decltype([](auto x) { return std::floor(x); }), false>;
using Ceil = Rounding<decltype([](auto x) { return std::ceil(x); }), false>;
using Trunc = Rounding<decltype([](auto x) { return std::trunc(x); }), false>;
// Half to even, as numpy: nearbyint under the default rounding mode.
using Round = Rounding<decltype([](auto x) { return std::nearbyint(x); }), true>;
using IsNan = Classify<decltype([](auto x) { return std::isnan(x); }), false>;
using IsInf = Classify<decltype([](auto x) { return std::isinf(x); }), false>;
using IsFinite = Classify<decltype([](auto x) { return std::isfinite(x); }), true>;
// clang-format on

template <class Op, class T>
concept DefinedFor = requires(typename Op::template Compute<T> x) {
  Op::Apply(x);
};

// Calls fn(Op{}) with the kernel struct of `op` under the type rule of its row.
template <class Fn>
decltype(auto) VisitUnaryOp(UnaryOp op, Fn&& fn) {
  switch (op) {
#define TESSERA_UNARY_OP(name, Kernel, aliases, rule, complex, doc) \
  case UnaryOp::k##Kernel:                                          \
    return fn(detail::Ruled<1, Kernel, TypeRule::rule, ComplexRule::complex>{});
#include "tessera/plan/internal/elementwise_ops.def"
  }
  std::abort();  // not an enumerator of elementwise_ops.def
}

template <class Op, class In>
void UnaryLoop(const void* in, void* out, std::int64_t n) {
  using Compute = typename Op::template Compute<In>;
  using Out = decltype(Op::Apply(Compute{}));
  const In* __restrict source = static_cast<const In*>(in);
  Out* __restrict target = static_cast<Out*>(out);
  for (std::int64_t i = 0; i < n; ++i) target[i] = Op::Apply(static_cast<Compute>(source[i]));
}

}  // namespace

Signature ResolveUnary(UnaryOp op, DType operand) {
  return VisitUnaryOp(op, [&](auto op_tag) {
    using Op = decltype(op_tag);
    return VisitDType(operand, [&](auto tag) -> Signature {
      using T = typename decltype(tag)::type;
      if constexpr (DefinedFor<Op, T>) {
        using Compute = typename Op::template Compute<T>;
        return {DTypeOf<Compute>(), DTypeOf<decltype(Op::Apply(Compute{}))>()};
      } else {
        throw detail::NotDefined(
            Name(op), operand.name(),
            operand.is_complex() ? "complex numbers have no order or bits; apply it to real(x), "
                                   "imag(x) or abs(x)"
            : op == UnaryOp::kNegative
                ? "use logical_not to flip booleans, or cast with astype first"
                : "cast with astype first");
      }
    });
  });
}

UnaryKernel GetUnaryKernel(UnaryOp op, DType input) {
  ResolveUnary(op, input);  // throws when undefined
  if (const UnaryKernel vector = VectorUnaryKernel(op, input)) return vector;
  return VisitUnaryOp(op, [&](auto op_tag) {
    using Op = decltype(op_tag);
    return VisitDType(input, [](auto tag) -> UnaryKernel {
      using T = typename decltype(tag)::type;
      if constexpr (DefinedFor<Op, T>) {
        return &UnaryLoop<Op, T>;
      } else {
        return nullptr;  // unreachable: ResolveUnary threw
      }
    });
  });
}

}  // namespace tessera::kernels
