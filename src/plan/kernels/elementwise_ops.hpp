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
concept Number = Integer<T> || Real<T>;

// FloatingResultType at compile time: 8- and 16-bit integers and bool -> float.
template <class T>
using FloatFor =
    std::conditional_t<Real<T>, T, std::conditional_t<(sizeof(T) <= 2), float, double>>;

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
  using type = std::conditional_t<Real<T>, T, double>;  // numpy's only integer loop
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
using EveryElementType =
    TypeList<bool, std::int8_t, std::int16_t, std::int32_t, std::int64_t, std::uint8_t,
             std::uint16_t, std::uint32_t, std::uint64_t, float, double>;

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

// Whether Kernel follows kRule for operands of every element type T: it is defined
// exactly for the dtypes the rule takes (on their compute type) and gives bool, or else
// its compute type, as the rule says.
template <int kArity, class Kernel, TypeRule kRule, class... T>
constexpr bool FollowsRule(TypeList<T...>) {
  const auto follows = []<class U>(std::type_identity<U>) {
    using Compute = typename ComputeFor<kRule, U>::type;
    using Out = typename decltype(ApplyResult<kArity, Kernel, Compute>())::type;
    const bool takes = (!Boolean<U> || TakesBool(kRule)) && (!Real<U> || TakesFloats(kRule));
    using Expected = std::conditional_t<GivesBool(kRule), bool, Compute>;
    return std::is_void_v<Out> ? !takes : takes && std::is_same_v<Out, Expected>;
  };
  return (follows(std::type_identity<T>{}) && ...);
}

// The kernel struct of a row of elementwise_ops.def (its static Apply) under the row's
// type rule: the kernel for input dtype T converts each element to Compute<T>.
template <int kArity, class Kernel, TypeRule kRule>
struct Ruled : Kernel {
  static_assert(FollowsRule<kArity, Kernel, kRule>(EveryElementType{}),
                "an elementwise kernel takes other dtypes, or gives another result, than "
                "the type rule of its row in elementwise_ops.def says");
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
