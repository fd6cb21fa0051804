// Fill values: parsing and writing the .zarray key, and encoding one element.
#include "fill_value.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <string>
#include <system_error>
#include <type_traits>

#include "tessera/core/errors.hpp"

namespace tessera {
namespace {

using zarr_detail::Fail;
using zarr_detail::Json;

// Integer bounds of an integer dtype.
struct IntegerRange {
  std::int64_t min;
  std::uint64_t max;
};

IntegerRange RangeOf(DType dtype) {
  return VisitDType(dtype, [](auto tag) -> IntegerRange {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      return {static_cast<std::int64_t>(std::numeric_limits<T>::min()),
              static_cast<std::uint64_t>(std::numeric_limits<T>::max())};
    } else {
      return {0, 1};
    }
  });
}

// An integer's canonical FillValue: int64 when it fits, uint64 above INT64_MAX.
FillValue CanonicalInteger(bool negative, std::uint64_t magnitude_or_value, std::int64_t value) {
  if (negative) return value;
  if (magnitude_or_value <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    return static_cast<std::int64_t>(magnitude_or_value);
  }
  return magnitude_or_value;
}

// A float that holds an integer value, as int64 / uint64; nullopt when fractional,
// not finite or beyond 64 bits.
std::optional<FillValue> IntegerOfFloat(double number) {
  if (!std::isfinite(number) || std::trunc(number) != number) return std::nullopt;
  constexpr double kTwoTo63 = 9223372036854775808.0;
  constexpr double kTwoTo64 = 18446744073709551616.0;
  if (number >= -kTwoTo63 && number < kTwoTo63) {
    auto value = static_cast<std::int64_t>(number);
    return CanonicalInteger(value < 0, static_cast<std::uint64_t>(value), value);
  }
  if (number >= 0 && number < kTwoTo64) return static_cast<std::uint64_t>(number);
  return std::nullopt;
}

bool InRange(const FillValue& integer, const IntegerRange& range) {
  if (const auto* value = std::get_if<std::int64_t>(&integer)) {
    return *value >= range.min && (*value < 0 || static_cast<std::uint64_t>(*value) <= range.max);
  }
  return std::get<std::uint64_t>(integer) <= range.max;
}

// The shortest text that reads back as `number` ("0.5", "1e+300", "nan").
std::string NumberText(double number) {
  std::array<char, 32> text{};  // the longest shortest form of a double is 24 characters
  const auto [end, error] = std::to_chars(text.data(), text.data() + text.size(), number);
  return error == std::errc() ? std::string(text.data(), end) : std::to_string(number);
}

template <class T, class Unrepresentable>
T FillAsReal(const FillValue& fill, DType dtype, const Unrepresentable& unrepresentable);

// `fill` converted to T; throws InvalidArgument when T cannot hold it.
template <class T>
T FillAs(const FillValue& fill, DType dtype) {
  auto unrepresentable = [&](const std::string& value) -> InvalidArgument {
    return InvalidArgument("fill value " + value + " cannot be stored in dtype " +
                           std::string(dtype.name()));
  };
  if (std::holds_alternative<std::monostate>(fill)) return T{};
  if (const bool* flag = std::get_if<bool>(&fill)) return static_cast<T>(*flag);
  if constexpr (kIsComplex<T>) {
    using Component = typename T::value_type;
    if (const auto* value = std::get_if<std::complex<double>>(&fill)) {
      return T(FillAs<Component>(value->real(), RealDType(dtype)),
               FillAs<Component>(value->imag(), RealDType(dtype)));
    }
    return T(FillAs<Component>(fill, RealDType(dtype)), Component{0});
  } else {
    if (const auto* value = std::get_if<std::complex<double>>(&fill)) {
      if (value->imag() != 0) {
        throw unrepresentable("(" + NumberText(value->real()) + "+" + NumberText(value->imag()) +
                              "j)");
      }
      return FillAs<T>(value->real(), dtype);
    }
    return FillAsReal<T>(fill, dtype, unrepresentable);
  }
}

// FillAs for a real T, the fill holding no complex number.
template <class T, class Unrepresentable>
T FillAsReal(const FillValue& fill, DType dtype, const Unrepresentable& unrepresentable) {
  if constexpr (std::is_same_v<T, bool>) {
    if (const double* number = std::get_if<double>(&fill)) return *number != 0;
    if (const auto* value = std::get_if<std::int64_t>(&fill)) return *value != 0;
    return std::get<std::uint64_t>(fill) != 0;
  } else if constexpr (std::is_floating_point_v<T>) {
    if (const double* number = std::get_if<double>(&fill)) {
      if (std::isfinite(*number) &&
          std::fabs(*number) > static_cast<double>(std::numeric_limits<T>::max())) {
        throw unrepresentable(NumberText(*number));
      }
      return static_cast<T>(*number);
    }
    if (const auto* value = std::get_if<std::int64_t>(&fill)) return static_cast<T>(*value);
    return static_cast<T>(std::get<std::uint64_t>(fill));
  } else {
    std::optional<FillValue> integer;
    if (const double* number = std::get_if<double>(&fill)) {
      integer = IntegerOfFloat(*number);
      if (!integer) throw unrepresentable(NumberText(*number));
    } else {
      integer = fill;
    }
    if (!InRange(*integer, RangeOf(dtype))) {
      throw unrepresentable(std::visit(
          [](const auto& value) -> std::string {
            if constexpr (std::is_arithmetic_v<std::decay_t<decltype(value)>>) {
              return std::to_string(value);
            } else {
              return "null";
            }
          },
          *integer));
    }
    if (const auto* value = std::get_if<std::int64_t>(&*integer)) return static_cast<T>(*value);
    return static_cast<T>(std::get<std::uint64_t>(*integer));
  }
}

// A float fill value of `dtype` (float32 or float64): a number, "NaN", "Infinity" or
// "-Infinity"; FormatError naming `where` otherwise.
double ParseFloatFill(const Json& value, DType dtype, const std::string& dtype_text,
                      std::string_view where) {
  constexpr std::string_view kKey = "fill_value";
  const std::string expected =
      "a number, \"NaN\", \"Infinity\", \"-Infinity\" or null for " + dtype_text;
  double number = 0;
  if (value.is_number()) {
    number = value.get<double>();
  } else if (value.is_string()) {
    const auto& text = value.get_ref<const std::string&>();
    if (text == "NaN") {
      number = std::numeric_limits<double>::quiet_NaN();
    } else if (text == "Infinity") {
      number = std::numeric_limits<double>::infinity();
    } else if (text == "-Infinity") {
      number = -std::numeric_limits<double>::infinity();
    } else {
      Fail(where, kKey, expected, value);
    }
  } else {
    Fail(where, kKey, expected, value);
  }
  if (dtype == float32 && std::isfinite(number) &&
      std::fabs(number) > static_cast<double>(std::numeric_limits<float>::max())) {
    Fail(where, kKey,
         "a number within float32's range (|x| <= 3.4028234663852886e+38), \"NaN\", "
         "\"Infinity\", \"-Infinity\" or null for " +
             dtype_text,
         value);
  }
  return number;
}

}  // namespace

namespace zarr_detail {

FillValue ParseFillValue(const Json& value, DType dtype, std::string_view typestr,
                         std::string_view where) {
  constexpr std::string_view kKey = "fill_value";
  if (value.is_null()) return std::monostate{};
  const std::string dtype_text =
      "dtype " + std::string(dtype.name()) + " (\"" + std::string(typestr) + "\")";
  switch (dtype.kind()) {
    case DTypeKind::kBool: {
      if (value.is_boolean()) return value.get<bool>();
      std::optional<Index> number = AsIndex(value);
      if (number && (*number == 0 || *number == 1)) return *number == 1;
      Fail(where, kKey, "true, false or null for " + dtype_text, value);
    }
    case DTypeKind::kSignedInt:
    case DTypeKind::kUnsignedInt: {
      const IntegerRange range = RangeOf(dtype);
      const std::string expected = "an integer in [" + std::to_string(range.min) + ", " +
                                   std::to_string(range.max) + "] or null for " + dtype_text;
      std::optional<FillValue> integer;
      if (value.is_number_unsigned()) {
        auto number = value.get<std::uint64_t>();
        integer = CanonicalInteger(false, number, 0);
      } else if (value.is_number_integer()) {
        auto number = value.get<std::int64_t>();
        integer = CanonicalInteger(number < 0, static_cast<std::uint64_t>(number), number);
      } else if (value.is_number_float()) {
        // An integral float ("3.0") is accepted, as numpy accepts it, but only where
        // floats are exact integers (|x| <= 2^53): beyond, the JSON parser has rounded
        // the written number (an out-of-range "-9223372036854775809" reads as -2^63).
        constexpr double kTwoTo53 = 9007199254740992.0;
        if (std::fabs(value.get<double>()) <= kTwoTo53) {
          integer = IntegerOfFloat(value.get<double>());
        }
      }
      if (!integer || !InRange(*integer, range)) Fail(where, kKey, expected, value);
      return *integer;
    }
    case DTypeKind::kComplex: {
      // zarr-python's form: [real, imaginary], each a float of the component dtype.
      const DType component = RealDType(dtype);
      if (value.is_array() && value.size() == 2) {
        return std::complex<double>(ParseFloatFill(value[0], component, dtype_text, where),
                                    ParseFloatFill(value[1], component, dtype_text, where));
      }
      if (value.is_number()) {  // a real fill: its real part
        return std::complex<double>(ParseFloatFill(value, component, dtype_text, where), 0.0);
      }
      Fail(where, kKey,
           "[real, imaginary] (each a number, \"NaN\", \"Infinity\" or \"-Infinity\") or "
           "null for " +
               dtype_text,
           value);
    }
    case DTypeKind::kFloat:
      break;
  }
  return ParseFloatFill(value, dtype, dtype_text, where);
}

Json FillValueToJson(const FillValue& fill, DType dtype) {
  if (dtype.is_complex() && !std::holds_alternative<std::monostate>(fill)) {
    const auto value = FillAs<std::complex<double>>(fill, dtype);
    return Json::array({FillValueToJson(value.real(), RealDType(dtype)),
                        FillValueToJson(value.imag(), RealDType(dtype))});
  }
  return std::visit(
      [dtype](const auto& value) -> Json {
        using V = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<V, std::monostate>) {
          return nullptr;
        } else if constexpr (std::is_same_v<V, std::complex<double>>) {
          // A real dtype holds the real part (EncodeFillElement refuses a nonzero
          // imaginary part).
          return FillValueToJson(value.real(), dtype);
        } else if constexpr (std::is_same_v<V, double>) {
          // A bool array holds (value != 0), as EncodeFillElement stores it; written as a
          // boolean because ParseFillValue reads only booleans and 0 / 1 for bool.
          if (dtype.kind() == DTypeKind::kBool) return value != 0;
          if (std::isnan(value)) return "NaN";
          if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
          // An integral float for an integer dtype is written as zarr-python would.
          if (dtype.kind() == DTypeKind::kSignedInt || dtype.kind() == DTypeKind::kUnsignedInt) {
            if (std::optional<FillValue> integer = IntegerOfFloat(value)) {
              return FillValueToJson(*integer, dtype);
            }
          }
          return value;
        } else if constexpr (std::is_same_v<V, bool>) {
          if (dtype.kind() == DTypeKind::kFloat) return value ? 1.0 : 0.0;
          if (dtype.kind() != DTypeKind::kBool) return value ? 1 : 0;
          return value;
        } else {
          if (dtype.kind() == DTypeKind::kFloat) return static_cast<double>(value);
          if (dtype.kind() == DTypeKind::kBool) return value != 0;
          return value;
        }
      },
      fill);
}

}  // namespace zarr_detail

void EncodeFillElement(const FillValue& fill, DType dtype, std::span<std::byte> out) {
  if (static_cast<std::int64_t>(out.size()) != dtype.itemsize()) {
    throw InvalidArgument("EncodeFillElement: output has " + std::to_string(out.size()) +
                          " bytes, dtype " + std::string(dtype.name()) + " needs " +
                          std::to_string(dtype.itemsize()));
  }
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T element = FillAs<T>(fill, dtype);
    std::memcpy(out.data(), &element, sizeof(T));
  });
}

}  // namespace tessera
