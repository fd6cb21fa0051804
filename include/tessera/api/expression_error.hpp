// ExpressionError: a formula given to tessera::evaluate_expression (or `tessera calc`)
// that cannot be parsed or evaluated, with the 1-based column it points at.
//
//   try { tessera::evaluate_expression("td = 1 / lg(t2)", inputs); }
//   catch (const tessera::ExpressionError& error) {
//     error.column();   // 10
//     error.reason();   // unknown function "lg"; did you mean "log"?
//     error.what();     // the reason, then the expression with a caret under column 10:
//   }
//     expression error at column 10: unknown function "lg"; did you mean "log"?
//       td = 1 / lg(t2)
//                ^
//
// Columns count characters (UTF-8 code points), not bytes; one past the end points at
// the end of the expression ("the expression ends where ... was expected").
#pragma once

#include <string>
#include <string_view>

#include "tessera/core/errors.hpp"

namespace tessera {

class ExpressionError : public InvalidArgument {
 public:
  // `column`: 1-based, at most one past the last character of `expression`.
  ExpressionError(std::string_view expression, int column, std::string reason);

  int column() const { return column_; }
  const std::string& reason() const { return reason_; }

 private:
  int column_;
  std::string reason_;
};

}  // namespace tessera
