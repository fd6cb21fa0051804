// Scalar: one number of any Tessera dtype, held exactly (an int64 above 2^53 stays exact).
//
//   tessera::Scalar s = 3;           // from any arithmetic C++ value
//   s.kind();                        // ScalarKind::kInt
//   s.As<float>();                   // 3.0f; conversions follow GetCastKernel's rules
//   s.ToString();                    // "3"
//   tessera::Scalar z = std::complex<double>(1, 2);   // ScalarKind::kComplex, "(1+2j)"
//
// CastElement<To>(value) is the one-element conversion rule that Scalar::As and the
// array cast kernels (kernels::GetCastKernel) share.
#pragma once

#include <complex>
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
// A real value becomes a complex one with a zero imaginary part; a complex value
// converts to bool as (real or imaginary part nonzero) and to a real type as its real
// part, the imaginary part discarded (numpy's unsafe cast; the array API refuses
// that cast, which api/ does before it gets here).
template <class To, class From>
constexpr To CastElement(From value) {
  if constexpr (kIsComplex<From>) {
    if constexpr (std::is_same_v<To, bool>) {
      return value.real() != 0 || value.imag() != 0;
    } else if constexpr (kIsComplex<To>) {
      return static_cast<To>(value);
    } else {
      return CastElement<To>(value.real());
    }
  } else if constexpr (kIsComplex<To>) {
    using Component = typename To::value_type;
    return To(CastElement<Component>(value), Component{0});
  } else if constexpr (std::is_same_v<To, bool>) {
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
  template <class T>
  Scalar(std::complex<T> value)  // NOLINT(google-explicit-constructor): as above
      : value_(std::complex<double>(value)) {}

  ScalarKind kind() const;
  // The value converted to T: floats to integers saturate and NaN gives 0, nonzero
  // gives true (the same rules as casting arrays).
  template <class T>
  T As() const;
  // Writes the value converted to `dtype` into `out` (dtype.itemsize() bytes).
  void WriteAs(DType dtype, void* out) const;
  // Python's repr: "3", "2.5", "True", "(1+2j)".
  std::string ToString() const;

  const std::variant<bool, std::int64_t, std::uint64_t, double, std::complex<double>>& value()
      const {
    return value_;
  }
  friend bool operator==(const Scalar&, const Scalar&) = default;

 private:
  std::variant<bool, std::int64_t, std::uint64_t, double, std::complex<double>> value_;
};

}  // namespace tessera
