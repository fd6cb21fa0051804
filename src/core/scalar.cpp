#include "tessera/core/scalar.hpp"

#include <charconv>
#include <cmath>
#include <cstring>

namespace tessera {

ScalarKind Scalar::kind() const {
  if (std::holds_alternative<bool>(value_)) return ScalarKind::kBool;
  if (std::holds_alternative<double>(value_)) return ScalarKind::kFloat;
  if (std::holds_alternative<std::complex<double>>(value_)) return ScalarKind::kComplex;
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
template std::complex<float> Scalar::As<std::complex<float>>() const;
template std::complex<double> Scalar::As<std::complex<double>>() const;

void Scalar::WriteAs(DType dtype, void* out) const {
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T converted = As<T>();
    std::memcpy(out, &converted, sizeof(T));
  });
}

namespace {

// The shortest text that reads back as `number` exactly ("2.5", "1e+20", "nan", "inf").
std::string ShortestRepr(double number) {
  char text[32];  // the shortest round-trip form of a double needs at most 24 characters
  const std::to_chars_result result = std::to_chars(text, text + sizeof(text), number);
  return std::string(text, result.ptr);
}

// Python's repr of a complex: "2j", "(1+2j)", "(-0-1.5j)", "(nan+infj)".
std::string ComplexRepr(std::complex<double> value) {
  const std::string imag = ShortestRepr(value.imag()) + "j";
  if (value.real() == 0 && !std::signbit(value.real())) return imag;
  const bool imag_signed = imag.front() == '-';
  return "(" + ShortestRepr(value.real()) + (imag_signed ? "" : "+") + imag + ")";
}

}  // namespace

std::string Scalar::ToString() const {
  if (const bool* flag = std::get_if<bool>(&value_)) return *flag ? "True" : "False";
  if (const std::int64_t* integer = std::get_if<std::int64_t>(&value_)) {
    return std::to_string(*integer);
  }
  if (const std::uint64_t* natural = std::get_if<std::uint64_t>(&value_)) {
    return std::to_string(*natural);
  }
  if (const auto* complex = std::get_if<std::complex<double>>(&value_)) {
    return ComplexRepr(*complex);
  }
  // Python's repr: the shortest text that reads back exactly, with ".0" on integral values
  // so that a float never prints like an integer.
  std::string repr = ShortestRepr(std::get<double>(value_));
  if (repr.find_first_of(".en") == std::string::npos) repr += ".0";
  return repr;
}

}  // namespace tessera
