// Element types of Tessera arrays.
//
// A DType is a small value naming one of the array API's numeric types. Values are
// always held in native (little-endian) byte order in memory; the byte order of
// stored data belongs to the storage layer. A complex element is std::complex<float>
// or std::complex<double>: two reals, real part first, as numpy lays it out. Typical use:
//   tessera::DType t = tessera::float64;      // constants below
//   t.itemsize();                             // 8
//   tessera::VisitDType(t, [](auto tag) { using T = typename decltype(tag)::type; ... });
#pragma once

#include <complex>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

namespace tessera {

enum class DTypeKind : std::uint8_t { kBool, kSignedInt, kUnsignedInt, kFloat, kComplex };

class DType {
 public:
  enum class Id : std::uint8_t {
    kBool,
    kInt8,
    kInt16,
    kInt32,
    kInt64,
    kUInt8,
    kUInt16,
    kUInt32,
    kUInt64,
    kFloat32,
    kFloat64,
    kComplex64,
    kComplex128,
  };

  constexpr explicit DType(Id id) : id_(id) {}

  constexpr Id id() const { return id_; }
  constexpr std::int64_t itemsize() const {
    switch (id_) {
      case Id::kBool:
      case Id::kInt8:
      case Id::kUInt8:
        return 1;
      case Id::kInt16:
      case Id::kUInt16:
        return 2;
      case Id::kInt32:
      case Id::kUInt32:
      case Id::kFloat32:
        return 4;
      case Id::kComplex128:
        return 16;
      default:
        return 8;
    }
  }
  constexpr DTypeKind kind() const {
    switch (id_) {
      case Id::kBool:
        return DTypeKind::kBool;
      case Id::kInt8:
      case Id::kInt16:
      case Id::kInt32:
      case Id::kInt64:
        return DTypeKind::kSignedInt;
      case Id::kFloat32:
      case Id::kFloat64:
        return DTypeKind::kFloat;
      case Id::kComplex64:
      case Id::kComplex128:
        return DTypeKind::kComplex;
      default:
        return DTypeKind::kUnsignedInt;
    }
  }
  constexpr bool is_complex() const { return kind() == DTypeKind::kComplex; }
  // Bytes of one real component: itemsize() but for complex dtypes, half of it. Byte
  // order applies to each component on its own.
  constexpr std::int64_t component_size() const {
    return is_complex() ? itemsize() / 2 : itemsize();
  }

  // numpy's name: "bool", "int8", ..., "float64", "complex64", "complex128".
  std::string_view name() const;

  // Parses a numpy name ("float64", "f8", "int32", "bool", "complex64", "c8", ...);
  // throws InvalidArgument.
  static DType FromName(std::string_view name);

  friend constexpr bool operator==(DType a, DType b) { return a.id_ == b.id_; }

 private:
  Id id_;
};

inline constexpr DType bool_{DType::Id::kBool};
inline constexpr DType int8{DType::Id::kInt8};
inline constexpr DType int16{DType::Id::kInt16};
inline constexpr DType int32{DType::Id::kInt32};
inline constexpr DType int64{DType::Id::kInt64};
inline constexpr DType uint8{DType::Id::kUInt8};
inline constexpr DType uint16{DType::Id::kUInt16};
inline constexpr DType uint32{DType::Id::kUInt32};
inline constexpr DType uint64{DType::Id::kUInt64};
inline constexpr DType float32{DType::Id::kFloat32};
inline constexpr DType float64{DType::Id::kFloat64};
inline constexpr DType complex64{DType::Id::kComplex64};
inline constexpr DType complex128{DType::Id::kComplex128};

// The real dtype of a complex dtype's components (complex64 -> float32); other dtypes
// are returned unchanged.
constexpr DType RealDType(DType dtype) {
  if (dtype == complex64) return float32;
  if (dtype == complex128) return float64;
  return dtype;
}

// The DType of C++ type T (bool, int8_t, ..., double, std::complex<float>, ...).
template <class T>
constexpr DType DTypeOf() {
  if constexpr (std::is_same_v<T, bool>)
    return bool_;
  else if constexpr (std::is_same_v<T, std::int8_t>)
    return int8;
  else if constexpr (std::is_same_v<T, std::int16_t>)
    return int16;
  else if constexpr (std::is_same_v<T, std::int32_t>)
    return int32;
  else if constexpr (std::is_same_v<T, std::int64_t>)
    return int64;
  else if constexpr (std::is_same_v<T, std::uint8_t>)
    return uint8;
  else if constexpr (std::is_same_v<T, std::uint16_t>)
    return uint16;
  else if constexpr (std::is_same_v<T, std::uint32_t>)
    return uint32;
  else if constexpr (std::is_same_v<T, std::uint64_t>)
    return uint64;
  else if constexpr (std::is_same_v<T, float>)
    return float32;
  else if constexpr (std::is_same_v<T, double>)
    return float64;
  else if constexpr (std::is_same_v<T, std::complex<float>>)
    return complex64;
  else if constexpr (std::is_same_v<T, std::complex<double>>)
    return complex128;
  else
    static_assert(sizeof(T) == 0, "not a Tessera element type");
}

template <class T>
struct TypeTag {
  using type = T;
};

// Whether T is one of the complex element types.
template <class T>
inline constexpr bool kIsComplex =
    std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;

// Calls fn(TypeTag<T>{}) with the C++ type of `dtype`; returns what fn returns.
// Dispatch happens once here, never inside a hot loop. Every branch is instantiated,
// complex ones included: a visitor that has nothing to do for complex types says so
// with `if constexpr (kIsComplex<T>)`.
template <class Fn>
decltype(auto) VisitDType(DType dtype, Fn&& fn) {
  switch (dtype.id()) {
    case DType::Id::kBool:
      return fn(TypeTag<bool>{});
    case DType::Id::kInt8:
      return fn(TypeTag<std::int8_t>{});
    case DType::Id::kInt16:
      return fn(TypeTag<std::int16_t>{});
    case DType::Id::kInt32:
      return fn(TypeTag<std::int32_t>{});
    case DType::Id::kInt64:
      return fn(TypeTag<std::int64_t>{});
    case DType::Id::kUInt8:
      return fn(TypeTag<std::uint8_t>{});
    case DType::Id::kUInt16:
      return fn(TypeTag<std::uint16_t>{});
    case DType::Id::kUInt32:
      return fn(TypeTag<std::uint32_t>{});
    case DType::Id::kUInt64:
      return fn(TypeTag<std::uint64_t>{});
    case DType::Id::kFloat32:
      return fn(TypeTag<float>{});
    case DType::Id::kComplex64:
      return fn(TypeTag<std::complex<float>>{});
    case DType::Id::kComplex128:
      return fn(TypeTag<std::complex<double>>{});
    case DType::Id::kFloat64:
      break;
  }
  return fn(TypeTag<double>{});
}

}  // namespace tessera
