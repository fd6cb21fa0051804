// The calculator's parser: expression text -> syntax tree, with no arrays involved (so
// fuzz/fuzz_expression.cpp can drive it alone). tessera/api/expression.hpp states the
// grammar; expression.cpp evaluates the tree.
//
//   ParsedExpression parsed = ParseExpression("td = 1 / (t2 - 35.86)");
//   parsed.target;             // "td"
//   PrintSyntax(parsed.root);  // "divide(1, subtract(t2, 35.86))"
//
// Every function call is checked against the function table here: known name, number
// of arguments, keyword names. Numbers, names and operators are not resolved (an
// unknown name is the evaluator's to report). Throws ExpressionError for any text it
// does not accept — never anything else but std::bad_alloc — and bounds its recursion
// by kMaxExpressionDepth and the text by kMaxExpressionLength.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "expression_functions.hpp"
#include "tessera/core/scalar.hpp"

namespace tessera::expression {

struct SyntaxNode {
  enum class Kind {
    kNumber,  // a literal or True/False: `number`
    kName,    // `text`: an input or a constant, resolved by the evaluator
    kNone,    // None
    kUnary,   // `function` of arguments[0]; `text` is the operator as written
    kBinary,  // `function` of arguments[0], arguments[1]; `text` the operator
    kCall,    // `function` (canonical name) of arguments; `text` the name as written
    kTuple,   // (a, b, ...): arguments
  };
  Kind kind = Kind::kNumber;
  int column = 1;        // 1-based column of the token naming the node
  std::string text;      // as written: the name, operator or function name
  std::string function;  // kUnary, kBinary, kCall: the array API function
  Scalar number;         // kNumber
  std::vector<SyntaxNode> arguments;
  // A keyword argument of a call (axis=0): its keyword and the keyword's column; ""
  // for positional ones. A call's positional arguments come first.
  std::string keyword;
  int keyword_column = 0;
  int depth = 0;  // 0 for leaves, 1 + the deepest argument otherwise
};

struct ParsedExpression {
  std::string target;     // NAME of "NAME = ...", else ""
  int target_column = 0;  // its column, 0 without one
  SyntaxNode root;
};

ParsedExpression ParseExpression(std::string_view text);

// The tree in call form, fully bracketed: "td = divide(1, subtract(t2, 35.86))". Parsing
// this text again gives the same text (numbers print so they read back exactly).
std::string PrintSyntax(const ParsedExpression& parsed);
std::string PrintSyntax(const SyntaxNode& node);

// True for words the grammar reserves (and, or, not, True, False, None): never names.
bool IsKeyword(std::string_view word);
// True for a name the grammar reads as one: [A-Za-z_][A-Za-z0-9_]*, not a keyword.
bool IsIdentifier(std::string_view word);

}  // namespace tessera::expression
