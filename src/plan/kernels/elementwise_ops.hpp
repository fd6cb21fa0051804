// Building blocks shared by the elementwise kernel files (unary_kernels.cpp,
// binary_kernels.cpp, cast_kernels.cpp); internal to kernels/.
//
// An op is a stateless struct with a static `Apply`; its row of elementwise_ops.def
// names it and gives its TypeRule, which Ruled<Op, rule> turns into a `Compute<T>`
// alias: the kernel for input dtype T converts each element to Compute<T> and applies
// the op; the output type is what Apply returns. Apply is constrained (`requires`) to the
// types the op is defined for, so one template decides both the signature (Resolve*) and
// the loop, and FollowsRule checks at compile time that it agrees with the row.
#pragma once

#include <cmath>
#include <complex>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "tessera/core/dtype.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/plan/internal/elementwise_table.hpp"

namespace tessera::kernels::detail {

template <class T>
concept Boolean = std::is_same_v<T, bool>;
template <class T>
concept Integer = std::is_integral_v<T> && !Boolean<T>;
template <class T>
concept Real = std::is_floating_point_v<T>;
template <class T>
concept Number = Integer<T> || Real<T>;  // real numbers
template <class T>
concept Complex = kIsComplex<T>;
template <class T>
concept Numeric = Number<T> || Complex<T>;  // the standard's "numeric": complex included
template <class T>
concept Inexact = Real<T> || Complex<T>;  // what floating-point functions take
template <class T>
concept Ordered = !Complex<T>;  // has <, > (bool and integers included)
// T, or a real T when kTakesComplex is false (round takes complex numbers, floor not).
template <class T, bool kTakesComplex>
concept RealUnless = kTakesComplex || !Complex<T>;

// FloatingResultType at compile time: 8- and 16-bit integers and bool -> float; floats
// and complex types are their own.
template <class T>
using FloatFor = std::conditional_t<Real<T> || Complex<T>, T,
                                    std::conditional_t<(sizeof(T) <= 2), float, double>>;

// The real type of a complex type's components; a real type itself.
template <class T>
struct ComponentOf {
  using type = T;
};
template <Complex T>
struct ComponentOf<T> {
  using type = typename T::value_type;
};

// The unsigned type integer arithmetic wraps in: at least `unsigned`, so that small
// types are not promoted to (overflowing) int before the operation.
template <Integer T>
using WrapType =
    std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

// Fn (std::plus<>, ...) on integers modulo 2^bits, as numpy: computed in WrapType.
template <class Fn, Integer T>
constexpr T Wrap(T a, T b) {
  return static_cast<T>(Fn{}(static_cast<WrapType<T>>(a), static_cast<WrapType<T>>(b)));
}

// Complex a * b as numpy's loops compute it: the textbook formula with one fused
// multiply-add per part (so (1e308 + 1e308i)^2 is -inf + inf i, as numpy gives), no
// rescue of NaN results from infinite parts (C's Annex G multiplication differs there).
template <Complex T>
T ComplexMultiply(T a, T b) {
  return {std::fma(a.real(), b.real(), -(a.imag() * b.imag())),
          std::fma(a.real(), b.imag(), a.imag() * b.real())};
}

// Complex a / b by Smith's method, as numpy: scaled by the larger part of b, so that
// |b|^2 never overflows; a division by zero gives infinite or NaN parts.
template <Complex T>
T ComplexDivide(T a, T b) {
  using R = typename T::value_type;
  const R b_real = b.real() < 0 ? -b.real() : b.real();
  const R b_imag = b.imag() < 0 ? -b.imag() : b.imag();
  if (b_real >= b_imag) {
    if (b_real == 0 && b_imag == 0) return {a.real() / b_real, a.imag() / b_real};
    const R ratio = b.imag() / b.real();
    const R scale = R{1} / (b.real() + b.imag() * ratio);
    return {(a.real() + a.imag() * ratio) * scale, (a.imag() - a.real() * ratio) * scale};
  }
  const R ratio = b.real() / b.imag();
  const R scale = R{1} / (b.imag() + b.real() * ratio);
  return {(a.real() * ratio + a.imag()) * scale, (a.imag() * ratio - a.real()) * scale};
}

// What an op's operands compute in, by its row's TypeRule: the element type's own, a
// float (kFloat: exp, atan2, ...; kTrueDivide), or int8 for bool (kBoolAsInt8, kShift:
// numpy's choice for ops without a bool loop).
template <TypeRule kRule, class T>
struct ComputeFor {
  using type = T;
};
template <class T>
struct ComputeFor<TypeRule::kFloat, T> {
  using type = FloatFor<T>;
};
template <class T>
struct ComputeFor<TypeRule::kTrueDivide, T> {
  using type = std::conditional_t<Real<T> || Complex<T>, T, double>;  // numpy's integer loop
};
template <class T>
struct ComputeFor<TypeRule::kBoolAsInt8, T> {
  using type = std::conditional_t<Boolean<T>, std::int8_t, T>;
};
template <class T>
struct ComputeFor<TypeRule::kShift, T> : ComputeFor<TypeRule::kBoolAsInt8, T> {};

// The element types of every dtype, for checks at compile time.
template <class... T>
struct TypeList {};
using EveryElementType = TypeList<bool, std::int8_t, std::int16_t, std::int32_t, std::int64_t,
                                  std::uint8_t, std::uint16_t, std::uint32_t, std::uint64_t, float,
                                  double, std::complex<float>, std::complex<double>>;

// What Kernel::Apply gives for kArity operands of type C, void where it is not defined.
template <int kArity, class Kernel, class C>
constexpr auto ApplyResult() {
  if constexpr (kArity == 1 && requires(C x) { Kernel::Apply(x); }) {
    return std::type_identity<decltype(Kernel::Apply(C{}))>{};
  } else if constexpr (kArity == 2 && requires(C x) { Kernel::Apply(x, x); }) {
    return std::type_identity<decltype(Kernel::Apply(C{}, C{}))>{};
  } else {
    return std::type_identity<void>{};
  }
}

// Whether Kernel follows kRule and kComplexRule for operands of every element type T: it
// is defined exactly for the dtypes the rules take (on their compute type) and gives
// bool, or else its compute type (for kComplexToReal on complex operands, the type of
// their components), as the rules say.
template <int kArity, class Kernel, TypeRule kRule, ComplexRule kComplexRule, class... T>
constexpr bool FollowsRule(TypeList<T...>) {
  const auto follows = []<class U>(std::type_identity<U>) {
    using Compute = typename ComputeFor<kRule, U>::type;
    using Out = typename decltype(ApplyResult<kArity, Kernel, Compute>())::type;
    const bool takes = (!Boolean<U> || TakesBool(kRule)) &&
                       (!(Real<U> || Complex<U>) || TakesFloats(kRule)) &&
                       (!Complex<U> || kComplexRule != ComplexRule::kRealOnly);
    using Value = std::conditional_t<kComplexRule == ComplexRule::kComplexToReal,
                                     typename ComponentOf<Compute>::type, Compute>;
    using Expected = std::conditional_t<GivesBool(kRule), bool, Value>;
    return std::is_void_v<Out> ? !takes : takes && std::is_same_v<Out, Expected>;
  };
  return (follows(std::type_identity<T>{}) && ...);
}

// The kernel struct of a row of elementwise_ops.def (its static Apply) under the row's
// type rules: the kernel for input dtype T converts each element to Compute<T>.
template <int kArity, class Kernel, TypeRule kRule, ComplexRule kComplexRule>
struct Ruled : Kernel {
  static_assert(FollowsRule<kArity, Kernel, kRule, kComplexRule>(EveryElementType{}),
                "an elementwise kernel takes other dtypes, or gives another result, than "
                "the type rules of its row in elementwise_ops.def say");
  static constexpr TypeRule kTypeRule = kRule;
  template <class T>
  using Compute = typename ComputeFor<kRule, T>::type;
};

// The InvalidArgument of an op applied to a dtype it is not defined for.
inline InvalidArgument NotDefined(std::string_view op, std::string_view dtypes,
                                  std::string_view advice) {
  return InvalidArgument(std::string(op) + " is not defined for " + std::string(dtypes) + "; " +
                         std::string(advice));
}

}  // namespace tessera::kernels::detail
