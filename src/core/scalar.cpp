#include "tessera/core/scalar.hpp"

#include <charconv>
#include <cstring>

namespace tessera {

ScalarKind Scalar::kind() const {
  if (std::holds_alternative<bool>(value_)) return ScalarKind::kBool;
  if (std::holds_alternative<double>(value_)) return ScalarKind::kFloat;
  return ScalarKind::kInt;
}

template <class T>
T Scalar::As() const {
  return std::visit([](auto value) { return CastElement<T>(value); }, value_);
}

template bool Scalar::As<bool>() const;
template std::int8_t Scalar::As<std::int8_t>() const;
template std::int16_t Scalar::As<std::int16_t>() const;
template std::int32_t Scalar::As<std::int32_t>() const;
template std::int64_t Scalar::As<std::int64_t>() const;
template std::uint8_t Scalar::As<std::uint8_t>() const;
template std::uint16_t Scalar::As<std::uint16_t>() const;
template std::uint32_t Scalar::As<std::uint32_t>() const;
template std::uint64_t Scalar::As<std::uint64_t>() const;
template float Scalar::As<float>() const;
template double Scalar::As<double>() const;

void Scalar::WriteAs(DType dtype, void* out) const {
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T converted = As<T>();
    std::memcpy(out, &converted, sizeof(T));
  });
}

std::string Scalar::ToString() const {
  if (const bool* flag = std::get_if<bool>(&value_)) return *flag ? "True" : "False";
  if (const std::int64_t* integer = std::get_if<std::int64_t>(&value_)) {
    return std::to_string(*integer);
  }
  if (const std::uint64_t* natural = std::get_if<std::uint64_t>(&value_)) {
    return std::to_string(*natural);
  }
  // Python's repr: the shortest text that reads back exactly, with ".0" on integral values
  // so that a float never prints like an integer.
  char text[32];  // the shortest round-trip form of a double needs at most 24 characters
  const double number = std::get<double>(value_);
  const std::to_chars_result result = std::to_chars(text, text + sizeof(text), number);
  std::string repr(text, result.ptr);
  if (repr.find_first_of(".en") == std::string::npos) repr += ".0";
  return repr;
}

}  // namespace tessera
