// Scalar: one number of any Tessera dtype, held exactly (an int64 above 2^53 stays exact).
//
//   tessera::Scalar s = 3;           // from any arithmetic C++ value
//   s.kind();                        // ScalarKind::kInt
//   s.As<float>();                   // 3.0f; conversions follow GetCastKernel's rules
//   s.ToString();                    // "3"
//
// CastElement<To>(value) is the one-element conversion rule that Scalar::As and the
// array cast kernels (kernels::GetCastKernel) share.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <variant>

#include "tessera/core/dtype.hpp"
#include "tessera/core/type_promotion.hpp"

namespace tessera {

// `value` converted to To as numpy's astype(casting="unsafe"), without undefined
// behaviour: nonzero (NaN included) -> true; float -> integer truncates toward zero,
// NaN -> 0 and values outside To's range saturate to its min/max; integer -> integer
// wraps modulo 2^bits; to float rounds to nearest (a double beyond float's range -> inf).
template <class To, class From>
constexpr To CastElement(From value) {
  if constexpr (std::is_same_v<To, bool>) {
    return value != 0;
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    // 2^digits is the first value above To's range; it and -2^digits are exact in From.
    constexpr From kLimit = static_cast<From>(std::numeric_limits<To>::max() / 2 + 1) * 2;
    constexpr From kLowest = std::is_signed_v<To> ? -kLimit : From(0);
    if (value != value) return To(0);  // NaN
    if (value >= kLimit) return std::numeric_limits<To>::max();
    if (value <= kLowest) return std::numeric_limits<To>::min();
    return static_cast<To>(value);
  } else {
    return static_cast<To>(value);
  }
}

class Scalar {
 public:
  Scalar() : value_(0.0) {}
  template <class T>
  requires std::is_arithmetic_v<T> Scalar(
      T value) {  // NOLINT(google-explicit-constructor): scalars convert implicitly
    if constexpr (std::is_same_v<T, bool>) {
      value_ = value;
    } else if constexpr (std::is_floating_point_v<T>) {
      value_ = static_cast<double>(value);
    } else if constexpr (std::is_signed_v<T>) {
      value_ = static_cast<std::int64_t>(value);
    } else {
      value_ = static_cast<std::uint64_t>(value);
    }
  }

  ScalarKind kind() const;
  // The value converted to T: floats to integers saturate and NaN gives 0, nonzero
  // gives true (the same rules as casting arrays).
  template <class T>
  T As() const;
  // Writes the value converted to `dtype` into `out` (dtype.itemsize() bytes).
  void WriteAs(DType dtype, void* out) const;
  std::string ToString() const;

  const std::variant<bool, std::int64_t, std::uint64_t, double>& value() const { return value_; }
  friend bool operator==(const Scalar&, const Scalar&) = default;

 private:
  std::variant<bool, std::int64_t, std::uint64_t, double> value_;
};

}  // namespace tessera
