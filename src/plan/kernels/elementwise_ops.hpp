// Building blocks shared by the elementwise kernel files (unary_kernels.cpp,
// binary_kernels.cpp, cast_kernels.cpp); internal to kernels/.
//
// An op is a stateless struct with a static `Apply` and a `Compute<T>` alias: the
// kernel for input dtype T converts each element to Compute<T> and applies the op; the
// output type is what Apply returns. Apply is constrained (`requires`) to the types the
// op is defined for, so one template decides both the signature (Resolve*) and the loop.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "tessera/core/dtype.hpp"
#include "tessera/core/errors.hpp"

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

// Where an op computes: the element type's own (Same), or a float (FloatMath, for
// exp, atan2, ...). IntegerFromBool is numpy's choice for ops without a bool loop
// (square, floor_divide, pow, shifts): bool operands compute in int8.
struct Same {
  template <class T>
  using Compute = T;
};
struct FloatMath {
  template <class T>
  using Compute = FloatFor<T>;
};
struct IntegerFromBool {
  template <class T>
  using Compute = std::conditional_t<Boolean<T>, std::int8_t, T>;
};

// The InvalidArgument of an op applied to a dtype it is not defined for.
inline InvalidArgument NotDefined(std::string_view op, std::string_view dtypes,
                                  std::string_view advice) {
  return InvalidArgument(std::string(op) + " is not defined for " + std::string(dtypes) + "; " +
                         std::string(advice));
}

}  // namespace tessera::kernels::detail
