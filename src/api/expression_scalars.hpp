// Folding the calculator's array-free parts: (1/273), log(2), 2**10 are computed at
// once as Python computes them on its own numbers — bool, int64 (overflow is an error
// rather than Python's big integers) and double — and stay "weak" scalars for the
// arrays they meet (tessera/api/expression.hpp).
//
//   Scalar third = FoldBinary("divide", Scalar(1), Scalar(3));   // 0.333... (double)
//   Scalar big = FoldBinary("pow", Scalar(2), Scalar(10));       // 1024 (int64)
//
// `function` is an array API name of expression_parser's function table (unary or
// binary). Throws InvalidArgument saying why (division by zero, integer overflow, a
// bitwise operator on a float); the caller adds the column.
#pragma once

#include <string_view>

#include "tessera/core/scalar.hpp"

namespace tessera::expression {

Scalar FoldUnary(std::string_view function, const Scalar& x);
Scalar FoldBinary(std::string_view function, const Scalar& x, const Scalar& y);

// Python's truth value of a number: nonzero (NaN included) is true.
bool Truthy(const Scalar& x);

}  // namespace tessera::expression
