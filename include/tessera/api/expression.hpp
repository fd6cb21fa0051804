// evaluate_expression: a numpy-like formula over named arrays, built into a lazy Array
// (what `tessera calc` computes; docs/compute.md "The calculator").
//
//   std::map<std::string, tessera::Array, std::less<>> inputs{{"t2", t2}, {"rh", rh}};
//   tessera::ExpressionResult td = tessera::evaluate_expression(
//       "td = ((1/273) - 0.0001844*log(0.611*exp(5423*((1/273)-(1/t2)))*rh/100/0.611))**-1",
//       inputs);
//   td.name;                      // "td" (empty without a leading "NAME =")
//   td.array.to_zarr("td.zarr");  // lazy until here
//
// Grammar (Python's operators and precedence, lowest first):
//   or; and; not; comparisons < <= > >= == != (not chained); |; ^; &; << >>; + -;
//   * / // % ; unary - + ~; ** (right-associative; -x**2 is -(x**2), x**-1 works);
//   numbers (1, 2.5, .5, 1e-3), names, (parentheses), calls f(a, b, keyword=value).
// Names: the inputs, then the constants pi, e, nan, inf (an input of that name wins),
// True, False, None. Functions: every elementwise function of elementwise.hpp by its
// array API name (exp, log, maximum, atan2, ...; numpy's arcsin, arctan2, power,
// absolute, invert are accepted too), where(cond, x, y), astype(x, float32), and the
// reductions sum, prod, mean, var, std, min, max, argmin, argmax, all, any,
// count_nonzero with axis (positional or axis=, int, tuple or None), keepdims=,
// correction= (or ddof=) for var and std, dtype= for sum, prod, mean, var, std.
// & | ^ ~ are bitwise as in numpy (logical on bool arrays); and, or, not are logical.
// Numbers are Python scalars, "weak" as in numpy 2: a float32 array times 0.611 stays
// float32. Parts without any array (1/273, log(2)) are folded in double or int64
// arithmetic first, as Python would; integer // and % by zero are errors.
//
// Errors: ExpressionError (an InvalidArgument) pointing at a column, for syntax, unknown
// names or functions, wrong arguments, and what tessera refuses (shapes that do not
// broadcast, bitwise ops on floats); also for an expression using no input at all
// (nothing to compute chunk by chunk). InvalidArgument for an input name that is not an
// identifier or is a keyword. Building runs nothing; planning and computing the
// result throw as any Array does.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "tessera/api/array.hpp"
#include "tessera/api/expression_error.hpp"

namespace tessera {

// Longest expression accepted, in bytes: far beyond any formula typed on a command
// line, and it bounds parsing time and memory for untrusted text.
inline constexpr std::size_t kMaxExpressionLength = 10000;
// Deepest nesting accepted (parentheses, calls and operators on one path each count a
// level): bounds the parser's recursion, and so its stack, for untrusted text.
inline constexpr int kMaxExpressionDepth = 200;

struct ExpressionResult {
  std::string name;  // NAME of a leading "NAME =", else ""
  Array array;
};

// True when `name` can be an input's name: letters, digits and _, not starting with a
// digit, and none of the reserved words and, or, not, True, False, None.
bool is_expression_name(std::string_view name);

// Parses `expression` and builds its lazy Array from `inputs` (by name). The result
// takes the Spec of the first input the expression uses.
ExpressionResult evaluate_expression(std::string_view expression,
                                     const std::map<std::string, Array, std::less<>>& inputs);

}  // namespace tessera
