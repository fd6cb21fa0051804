#include "expression_scalars.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "tessera/core/errors.hpp"

namespace tessera::expression {
namespace {

bool IsFloat(const Scalar& x) { return x.kind() == ScalarKind::kFloat; }
bool IsBool(const Scalar& x) { return x.kind() == ScalarKind::kBool; }
double AsDouble(const Scalar& x) { return x.As<double>(); }
std::int64_t AsInt(const Scalar& x) { return x.As<std::int64_t>(); }

// The calculator folds real numbers only (it has no complex literals; a complex scalar
// reaches it only from C++).
void RequireReal(std::string_view function, const Scalar& x) {
  if (x.kind() != ScalarKind::kComplex) return;
  throw InvalidArgument(std::string(function) + " of the complex number " + x.ToString() +
                        ": the calculator folds real numbers only; pass a complex array "
                        "instead");
}

[[noreturn]] void Overflow(std::string_view function) {
  throw InvalidArgument(std::string(function) +
                        " of these integers overflows 64 bits; write one of them as a float "
                        "(e.g. 2.0) to compute in floating point");
}

std::int64_t CheckedPower(std::int64_t base, std::int64_t exponent) {
  std::int64_t result = 1;
  while (exponent > 0) {
    if ((exponent & 1) != 0 && __builtin_mul_overflow(result, base, &result)) Overflow("pow");
    exponent >>= 1;
    if (exponent > 0 && __builtin_mul_overflow(base, base, &base)) Overflow("pow");
  }
  return result;
}

// Python's integer // and %: the quotient rounds toward minus infinity, the remainder
// takes the divisor's sign.
Scalar IntegerDivision(std::string_view function, std::int64_t x, std::int64_t y) {
  if (y == 0) {
    throw InvalidArgument("integer division or modulo by zero (" + std::string(function) + ")");
  }
  if (x == std::numeric_limits<std::int64_t>::min() && y == -1) {
    if (function == "remainder") return std::int64_t{0};
    Overflow(function);
  }
  std::int64_t quotient = x / y;
  std::int64_t remainder = x % y;
  if (remainder != 0 && ((remainder < 0) != (y < 0))) {
    --quotient;
    remainder += y;
  }
  return function == "floor_divide" ? quotient : remainder;
}

Scalar FloatDivision(std::string_view function, double x, double y) {
  if (y == 0) throw InvalidArgument("division by zero (" + std::string(function) + ")");
  if (function == "divide") return x / y;
  double remainder = std::fmod(x, y);
  if (remainder != 0 && ((remainder < 0) != (y < 0))) remainder += y;
  if (function == "remainder") return remainder;
  if (std::isinf(y) && std::isfinite(x)) {
    // As Python: 1.0 // inf is 0.0, -1.0 // inf is -1.0 (the remainder being inf).
    return x == 0 || (x < 0) == (y < 0) ? 0.0 : -1.0;
  }
  return std::floor((x - remainder) / y + 0.5);  // (x - mod) / y is a whole number
}

Scalar Bitwise(std::string_view function, const Scalar& x, const Scalar& y) {
  if (IsFloat(x) || IsFloat(y)) {
    throw InvalidArgument(std::string(function) + " needs integer or bool operands, not floats");
  }
  if (IsBool(x) && IsBool(y) && !function.ends_with("shift")) {
    const bool a = x.As<bool>();
    const bool b = y.As<bool>();
    if (function == "bitwise_and") return a && b;
    if (function == "bitwise_or") return a || b;
    return a != b;
  }
  const std::int64_t a = AsInt(x);
  const std::int64_t b = AsInt(y);
  if (function == "bitwise_and") return a & b;
  if (function == "bitwise_or") return a | b;
  if (function == "bitwise_xor") return a ^ b;
  if (b < 0 || b > 63) {
    throw InvalidArgument("shift count " + std::to_string(b) + " is outside 0..63");
  }
  if (function == "bitwise_right_shift") return a >> b;
  const auto shifted = static_cast<std::int64_t>(static_cast<std::uint64_t>(a) << b);
  if ((shifted >> b) != a) Overflow(function);  // bits (or the sign) shifted out
  return shifted;
}

Scalar Compare(std::string_view function, const Scalar& x, const Scalar& y) {
  const bool exact = !IsFloat(x) && !IsFloat(y);
  const auto compare = [&](auto a, auto b) {
    if (function == "equal") return a == b;
    if (function == "not_equal") return a != b;
    if (function == "less") return a < b;
    if (function == "less_equal") return a <= b;
    if (function == "greater") return a > b;
    return a >= b;
  };
  return exact ? compare(AsInt(x), AsInt(y)) : compare(AsDouble(x), AsDouble(y));
}

Scalar Arithmetic(std::string_view function, const Scalar& x, const Scalar& y) {
  if (!IsFloat(x) && !IsFloat(y)) {
    const std::int64_t a = AsInt(x);
    const std::int64_t b = AsInt(y);
    std::int64_t result = 0;
    bool overflow = false;
    if (function == "add") {
      overflow = __builtin_add_overflow(a, b, &result);
    } else if (function == "subtract") {
      overflow = __builtin_sub_overflow(a, b, &result);
    } else if (function == "multiply") {
      overflow = __builtin_mul_overflow(a, b, &result);
    } else if (function == "pow") {
      if (b >= 0) return CheckedPower(a, b);
      if (a == 0) throw InvalidArgument("0 cannot be raised to a negative power");
      return std::pow(static_cast<double>(a), static_cast<double>(b));
    } else if (function == "divide") {
      return FloatDivision(function, static_cast<double>(a), static_cast<double>(b));
    } else {
      return IntegerDivision(function, a, b);
    }
    if (overflow) Overflow(function);
    return result;
  }
  const double a = AsDouble(x);
  const double b = AsDouble(y);
  if (function == "add") return a + b;
  if (function == "subtract") return a - b;
  if (function == "multiply") return a * b;
  if (function == "pow") return std::pow(a, b);
  return FloatDivision(function, a, b);
}

// maximum, minimum (NaN propagates, as numpy's) and the float-only binary functions.
Scalar Math(std::string_view function, const Scalar& x, const Scalar& y) {
  if ((function == "maximum" || function == "minimum") && !IsFloat(x) && !IsFloat(y)) {
    const bool maximum = function == "maximum";
    if (IsBool(x) && IsBool(y))
      return maximum ? x.As<bool>() || y.As<bool>() : x.As<bool>() && y.As<bool>();
    return maximum ? std::max(AsInt(x), AsInt(y)) : std::min(AsInt(x), AsInt(y));
  }
  const double a = AsDouble(x);
  const double b = AsDouble(y);
  if (function == "maximum" || function == "minimum") {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
    return function == "maximum" ? std::max(a, b) : std::min(a, b);
  }
  if (function == "atan2") return std::atan2(a, b);
  if (function == "hypot") return std::hypot(a, b);
  if (function == "copysign") return std::copysign(a, b);
  const double larger = std::max(a, b);  // logaddexp
  if (std::isinf(larger) && larger > 0) return larger;
  return larger + std::log1p(std::exp(-std::abs(a - b)));
}

using DoubleFunction = double (*)(double);

// The float-valued unary functions; nullptr for the others.
DoubleFunction FloatFunction(std::string_view function) {
  struct Entry {
    std::string_view name;
    DoubleFunction fn;
  };
  static constexpr Entry kTable[] = {
      {"sqrt", [](double v) { return std::sqrt(v); }},
      {"exp", [](double v) { return std::exp(v); }},
      {"expm1", [](double v) { return std::expm1(v); }},
      {"log", [](double v) { return std::log(v); }},
      {"log1p", [](double v) { return std::log1p(v); }},
      {"log2", [](double v) { return std::log2(v); }},
      {"log10", [](double v) { return std::log10(v); }},
      {"sin", [](double v) { return std::sin(v); }},
      {"cos", [](double v) { return std::cos(v); }},
      {"tan", [](double v) { return std::tan(v); }},
      {"asin", [](double v) { return std::asin(v); }},
      {"acos", [](double v) { return std::acos(v); }},
      {"atan", [](double v) { return std::atan(v); }},
      {"sinh", [](double v) { return std::sinh(v); }},
      {"cosh", [](double v) { return std::cosh(v); }},
      {"tanh", [](double v) { return std::tanh(v); }},
      {"asinh", [](double v) { return std::asinh(v); }},
      {"acosh", [](double v) { return std::acosh(v); }},
      {"atanh", [](double v) { return std::atanh(v); }},
  };
  for (const Entry& entry : kTable) {
    if (entry.name == function) return entry.fn;
  }
  return nullptr;
}

}  // namespace

bool Truthy(const Scalar& x) { return x.As<bool>(); }

Scalar FoldUnary(std::string_view function, const Scalar& x) {
  RequireReal(function, x);
  if (function == "logical_not") return !Truthy(x);
  // The calculator's numbers are real: real and conj give the number, imag its zero.
  if (function == "real" || function == "conj") return x;
  if (function == "imag") {
    if (IsFloat(x)) return 0.0;
    return IsBool(x) ? Scalar(false) : Scalar(std::int64_t{0});
  }
  if (function == "isnan") return IsFloat(x) && std::isnan(AsDouble(x));
  if (function == "isinf") return IsFloat(x) && std::isinf(AsDouble(x));
  if (function == "isfinite") return !IsFloat(x) || std::isfinite(AsDouble(x));
  if (const DoubleFunction fn = FloatFunction(function)) return fn(AsDouble(x));
  if (function == "bitwise_invert") {
    if (IsFloat(x))
      throw InvalidArgument("~ (bitwise_invert) needs an integer or bool, not a float");
    if (IsBool(x)) return !x.As<bool>();
    return ~AsInt(x);
  }
  if (IsFloat(x)) {
    const double value = AsDouble(x);
    if (function == "negative") return -value;
    if (function == "positive") return value;
    if (function == "abs") return std::abs(value);
    if (function == "square") return value * value;
    if (function == "floor") return std::floor(value);
    if (function == "ceil") return std::ceil(value);
    if (function == "trunc") return std::trunc(value);
    if (function == "round") return std::nearbyint(value);  // half to even, as numpy
    if (std::isnan(value)) return value;                    // sign
    return value > 0 ? 1.0 : (value < 0 ? -1.0 : 0.0);
  }
  const std::int64_t value = AsInt(x);
  if (function == "negative" || function == "abs") {
    if (value == std::numeric_limits<std::int64_t>::min()) Overflow(function);
    return function == "abs" && value >= 0 ? value : -value;
  }
  if (function == "square") return Arithmetic("multiply", value, value);
  if (function == "sign") return std::int64_t{value > 0 ? 1 : (value < 0 ? -1 : 0)};
  return value;  // positive, floor, ceil, trunc, round of an integer
}

Scalar FoldBinary(std::string_view function, const Scalar& x, const Scalar& y) {
  RequireReal(function, x);
  RequireReal(function, y);
  if (function.starts_with("bitwise_")) return Bitwise(function, x, y);
  if (function.starts_with("logical_")) {
    const bool a = Truthy(x);
    const bool b = Truthy(y);
    if (function == "logical_and") return a && b;
    if (function == "logical_or") return a || b;
    return a != b;
  }
  if (function == "equal" || function == "not_equal" || function.starts_with("less") ||
      function.starts_with("greater")) {
    return Compare(function, x, y);
  }
  if (function == "add" || function == "subtract" || function == "multiply" ||
      function == "divide" || function == "floor_divide" || function == "remainder" ||
      function == "pow") {
    return Arithmetic(function, x, y);
  }
  return Math(function, x, y);
}

}  // namespace tessera::expression
