// Elementwise functions of the array API standard, and C++ operators.
//
//   auto td = 1.0 / ((1.0 / 273) - 0.0001844 * tessera::log(e / 0.611));
//   auto hot = tessera::where(t2 > 300.0, t2, tessera::full_like(t2, 0));
//
// Shapes broadcast as in numpy; dtypes promote as tessera::ResultType (arrays) and
// ResultTypeWithScalar (a C++ number is "weak": x_float32 * 2.0 stays float32).
// Integer inputs to exp, log, sin, ... compute in floating point (FloatingResultType);
// `divide` of integers gives float64. complex64 and complex128 arrays take what the
// standard defines for them (arithmetic, exp, log, sqrt, trigonometry, abs, equal, ...);
// ordered functions (floor, maximum, less, atan2, ...) throw InvalidArgument for them. Each
// function is lazy: it returns a new Array. Bad dtypes (bitwise ops on floats) and shapes that do
// not broadcast throw InvalidArgument at once.
#pragma once

#include <string_view>
#include <vector>

#include "tessera/api/array.hpp"
#include "tessera/core/scalar.hpp"

namespace tessera {

// Any unary / binary elementwise function by its array API name ("exp", "add", ...):
// the rows of tessera/plan/internal/elementwise_ops.def, which also define the functions below
// (one declaration here for each row; a test checks that both agree).
Array elementwise(std::string_view function, const Array& x);
Array elementwise(std::string_view function, const Array& x, const Array& y);
Array elementwise(std::string_view function, const Array& x, const Scalar& y);
Array elementwise(std::string_view function, const Scalar& x, const Array& y);
// The array API names of the elementwise functions taking `arity` (1 or 2) arrays, in
// the table's order (front ends bind each of them: the Python module).
std::vector<std::string_view> elementwise_function_names(int arity);
// What the elementwise function `function` computes, in one sentence, with which dtypes
// it takes ("The sine of x (radians). Takes numbers and bool (integers compute in
// floating point) and complex numbers."); throws InvalidArgument for an unknown name.
std::string elementwise_function_doc(std::string_view function);

// Unary.
Array negative(const Array& x);
Array positive(const Array& x);
Array abs(const Array& x);
Array sign(const Array& x);
Array square(const Array& x);
Array sqrt(const Array& x);
Array exp(const Array& x);
Array expm1(const Array& x);
Array log(const Array& x);
Array log1p(const Array& x);
Array log2(const Array& x);
Array log10(const Array& x);
Array sin(const Array& x);
Array cos(const Array& x);
Array tan(const Array& x);
Array asin(const Array& x);
Array acos(const Array& x);
Array atan(const Array& x);
Array sinh(const Array& x);
Array cosh(const Array& x);
Array tanh(const Array& x);
Array asinh(const Array& x);
Array acosh(const Array& x);
Array atanh(const Array& x);
Array floor(const Array& x);
Array ceil(const Array& x);
Array trunc(const Array& x);
Array round(const Array& x);
Array isnan(const Array& x);
Array isinf(const Array& x);
Array isfinite(const Array& x);
Array logical_not(const Array& x);
Array bitwise_invert(const Array& x);
// The parts and the conjugate of complex arrays (complex64 -> float32 for real and
// imag); of a real array, the array itself, zeros, and the array itself.
Array real(const Array& x);
Array imag(const Array& x);
Array conj(const Array& x);

// Binary; each also takes a scalar on either side.
#define TESSERA_DECLARE_BINARY(name)           \
  Array name(const Array& x, const Array& y);  \
  Array name(const Array& x, const Scalar& y); \
  Array name(const Scalar& x, const Array& y);
TESSERA_DECLARE_BINARY(add)
TESSERA_DECLARE_BINARY(subtract)
TESSERA_DECLARE_BINARY(multiply)
TESSERA_DECLARE_BINARY(divide)
TESSERA_DECLARE_BINARY(floor_divide)
TESSERA_DECLARE_BINARY(remainder)
TESSERA_DECLARE_BINARY(pow)
TESSERA_DECLARE_BINARY(maximum)
TESSERA_DECLARE_BINARY(minimum)
TESSERA_DECLARE_BINARY(atan2)
TESSERA_DECLARE_BINARY(hypot)
TESSERA_DECLARE_BINARY(logaddexp)
TESSERA_DECLARE_BINARY(copysign)
TESSERA_DECLARE_BINARY(equal)
TESSERA_DECLARE_BINARY(not_equal)
TESSERA_DECLARE_BINARY(less)
TESSERA_DECLARE_BINARY(less_equal)
TESSERA_DECLARE_BINARY(greater)
TESSERA_DECLARE_BINARY(greater_equal)
TESSERA_DECLARE_BINARY(logical_and)
TESSERA_DECLARE_BINARY(logical_or)
TESSERA_DECLARE_BINARY(logical_xor)
TESSERA_DECLARE_BINARY(bitwise_and)
TESSERA_DECLARE_BINARY(bitwise_or)
TESSERA_DECLARE_BINARY(bitwise_xor)
TESSERA_DECLARE_BINARY(bitwise_left_shift)
TESSERA_DECLARE_BINARY(bitwise_right_shift)
#undef TESSERA_DECLARE_BINARY

// condition ? x : y, broadcast together; x and y promote as a binary op.
Array where(const Array& condition, const Array& x, const Array& y);
Array where(const Array& condition, const Array& x, const Scalar& y);
Array where(const Array& condition, const Scalar& x, const Array& y);
Array astype(const Array& x, DType dtype);
Array broadcast_to(const Array& x, Shape shape);

// Operators: arithmetic, comparison (elementwise, giving bool arrays), logical and
// bitwise (&, |, ^ on bool or integer arrays, ~ as bitwise_invert, ! as logical_not).
#define TESSERA_DECLARE_OPERATOR(op)                  \
  Array operator op(const Array& x, const Array& y);  \
  Array operator op(const Array& x, const Scalar& y); \
  Array operator op(const Scalar& x, const Array& y);
TESSERA_DECLARE_OPERATOR(+)
TESSERA_DECLARE_OPERATOR(-)
TESSERA_DECLARE_OPERATOR(*)
TESSERA_DECLARE_OPERATOR(/)
TESSERA_DECLARE_OPERATOR(%)
TESSERA_DECLARE_OPERATOR(==)
TESSERA_DECLARE_OPERATOR(!=)
TESSERA_DECLARE_OPERATOR(<)
TESSERA_DECLARE_OPERATOR(<=)
TESSERA_DECLARE_OPERATOR(>)
TESSERA_DECLARE_OPERATOR(>=)
TESSERA_DECLARE_OPERATOR(&)
TESSERA_DECLARE_OPERATOR(|)
TESSERA_DECLARE_OPERATOR(^)
TESSERA_DECLARE_OPERATOR(<<)
TESSERA_DECLARE_OPERATOR(>>)
#undef TESSERA_DECLARE_OPERATOR
Array operator-(const Array& x);
Array operator+(const Array& x);
Array operator~(const Array& x);
Array operator!(const Array& x);

}  // namespace tessera
