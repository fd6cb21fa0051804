// The calculator's parser: precedence and associativity as Python's, the call form it
// prints, and the column every refusal points at.
#include "expression_parser.hpp"

#include <gtest/gtest.h>

#include <string>

#include "tessera/api/expression.hpp"

namespace tessera::expression {
namespace {

std::string Printed(std::string_view text) { return PrintSyntax(ParseExpression(text)); }

// The error `text` gives: its column and reason; fails the test when it parses.
ExpressionError ErrorOf(std::string_view text) {
  try {
    ParseExpression(text);
  } catch (const ExpressionError& error) {
    return error;
  }
  ADD_FAILURE() << "\"" << text << "\" parsed";
  return ExpressionError(text, 1, "parsed");
}

TEST(ExpressionParserTest, FollowsPythonPrecedence) {
  EXPECT_EQ(Printed("a + b * c"), "add(a, multiply(b, c))");
  EXPECT_EQ(Printed("a - b - c"), "subtract(subtract(a, b), c)");
  EXPECT_EQ(Printed("a / b / c"), "divide(divide(a, b), c)");
  EXPECT_EQ(Printed("a // b % c"), "remainder(floor_divide(a, b), c)");
  EXPECT_EQ(Printed("(a + b) * c"), "multiply(add(a, b), c)");
  EXPECT_EQ(Printed("a < b + 1"), "less(a, add(b, 1))");
  EXPECT_EQ(Printed("a > 0 & b"), "greater(a, bitwise_and(0, b))");
  EXPECT_EQ(Printed("(a > 0) & (b <= 2) | c"),
            "bitwise_or(bitwise_and(greater(a, 0), less_equal(b, 2)), c)");
  EXPECT_EQ(Printed("a | b ^ c & d"), "bitwise_or(a, bitwise_xor(b, bitwise_and(c, d)))");
  EXPECT_EQ(Printed("a << 1 + 2"), "bitwise_left_shift(a, add(1, 2))");
  EXPECT_EQ(Printed("not a == b and c or d"),
            "logical_or(logical_and(logical_not(equal(a, b)), c), d)");
  EXPECT_EQ(Printed("~a != -b"), "not_equal(bitwise_invert(a), negative(b))");
}

TEST(ExpressionParserTest, PowerBindsTighterThanASignOnItsLeftAndGroupsRight) {
  EXPECT_EQ(Printed("-x**2"), "negative(pow(x, 2))");
  EXPECT_EQ(Printed("x**-1"), "pow(x, negative(1))");
  EXPECT_EQ(Printed("2**3**2"), "pow(2, pow(3, 2))");
  EXPECT_EQ(Printed("-2**-x**2"), "negative(pow(2, negative(pow(x, 2))))");
  EXPECT_EQ(Printed("(-x)**2"), "pow(negative(x), 2)");
  EXPECT_EQ(Printed("a * b ** c"), "multiply(a, pow(b, c))");
  EXPECT_EQ(Printed("--+x"), "negative(negative(positive(x)))");
}

TEST(ExpressionParserTest, ReadsNumbersAsPythonDoes) {
  EXPECT_EQ(Printed("1"), "1");
  EXPECT_EQ(Printed("2.5 + .5 + 1. + 1e-3 + 2E+2 + 7e0"),
            "add(add(add(add(add(2.5, 0.5), 1.0), 0.001), 200.0), 7.0)");
  EXPECT_EQ(Printed("9223372036854775807"), "9223372036854775807");
  EXPECT_EQ(Printed("True + False"), "add(True, False)");
  const ParsedExpression parsed = ParseExpression("0.0001844");
  EXPECT_EQ(parsed.root.number, Scalar(0.0001844));
  EXPECT_EQ(ParseExpression("3").root.number.kind(), ScalarKind::kInt);
}

TEST(ExpressionParserTest, ReadsTheDewPointFormulaAndItsTarget) {
  const ParsedExpression parsed = ParseExpression(
      "td = ((1/273) - 0.0001844*log(0.611*exp(5423*((1/273)-(1/t2)))*rh/100/0.611))**-1");
  EXPECT_EQ(parsed.target, "td");
  EXPECT_EQ(parsed.target_column, 1);
  EXPECT_EQ(PrintSyntax(parsed.root),
            "pow(subtract(divide(1, 273), multiply(0.0001844, log(divide(divide(multiply(multiply("
            "0.611, exp(multiply(5423, subtract(divide(1, 273), divide(1, t2))))), rh), 100), "
            "0.611)))), negative(1))");
  EXPECT_EQ(ParseExpression("  t = a").target_column, 3);
  EXPECT_EQ(ParseExpression("a == b").target, "");
}

TEST(ExpressionParserTest, ReadsCallsKeywordsAndTuples) {
  EXPECT_EQ(Printed("sum(x, 0)"), "sum(x, axis=0)");
  EXPECT_EQ(Printed("mean(x, axis=(0, -1), keepdims=True)"),
            "mean(x, axis=(0, negative(1)), keepdims=True)");
  EXPECT_EQ(Printed("max(x, axis=(1,))"), "max(x, axis=(1,))");
  EXPECT_EQ(Printed("var(x, None, correction=1)"), "var(x, axis=None, correction=1)");
  EXPECT_EQ(Printed("where(x > 0, x, 0)"), "where(greater(x, 0), x, 0)");
  EXPECT_EQ(Printed("arctan2(y, x) + power(x, 2)"), "add(atan2(y, x), pow(x, 2))");
  EXPECT_EQ(Printed("astype(x, float32)"), "astype(x, float32)");
  EXPECT_EQ(Printed("sum(x, axis=(),)"), "sum(x, axis=())");
  const ParsedExpression parsed = ParseExpression("log( t2 )");
  EXPECT_EQ(parsed.root.kind, SyntaxNode::Kind::kCall);
  EXPECT_EQ(parsed.root.text, "log");
  EXPECT_EQ(parsed.root.arguments[0].column, 6);
}

TEST(ExpressionParserTest, PrintedFormReadsBackTheSame) {
  for (const std::string_view text :
       {"td = ((1/273) - 0.0001844*log(0.611*exp(5423*((1/273)-(1/t2)))*rh/100/0.611))**-1",
        "not a < 3 or ~b", "sum(where(x > 0.1, x, nan), (0, 1), keepdims=True) / 3e-7",
        "x ** 0.1 + 1e300 * 123456789.123456789"}) {
    const std::string printed = Printed(text);
    EXPECT_EQ(Printed(printed), printed) << text;
  }
}

struct BadExpression {
  std::string_view text;
  int column;
  std::string_view reason_part;
};

TEST(ExpressionParserTest, RefusalsPointAtTheColumn) {
  const BadExpression cases[] = {
      {"", 1, "empty"},
      {"   ", 4, "empty"},
      {"td =", 5, "nothing follows 'td ='"},
      {"(t2 + 1", 1, "'(' at column 1 is never closed"},
      {"log(t2 + 1", 4, "never closed"},
      {"t2 + 1)", 7, "unmatched ')'"},
      {"t2 +", 5, "the expression ends where a number"},
      {"t2 * * 2", 6, "an operand is missing"},
      {"1e + t2", 1, "the exponent has no digits"},
      {"t2 * 1e-", 6, "the exponent has no digits"},
      {"2t2", 1, "cannot run into a name"},
      {"1.2.3", 1, "malformed number"},
      {"99999999999999999999", 1, "does not fit in 64 bits"},
      {"1e999", 1, "out of a double's range"},
      {"td = 1 / lg(t2)", 10, "unknown function \"lg\"; did you mean \"log\"?"},
      {"t2 + frobnicate(t2)", 6, "unknown function \"frobnicate\"; docs/compute.md"},
      {"log(t2, 2)", 9, "log() takes at most 1 positional arguments: log(x)"},
      {"atan2(y)", 8, "atan2() needs 2 arguments, got 1: atan2(x, y)"},
      {"where(c, x)", 11, "needs 3 arguments"},
      {"sum()", 5, "needs 1 argument, got 0"},
      {"sum(x, 0, 1)", 11, "at most 2 positional"},
      {"sum(x, axes=0)", 8, "sum() has no keyword \"axes\"; did you mean \"axis\"?"},
      {"log(x, base=2)", 8, "log() has no keyword \"base\"; it takes no keywords"},
      {"sum(x, 0, axis=1)", 11, "sum() got axis twice"},
      {"var(x, ddof=1, correction=1)", 16, "got correction twice"},
      {"sum(axis=0, x)", 13, "positional argument cannot follow keyword"},
      {"t2 $ 3", 4, "unexpected '$'"},
      {"t2 ! 3", 4, "write != for"},
      {"t2[0]", 3, "indexing is not supported"},
      {"a < b < c", 7, "cannot be chained"},
      {"a = b = c", 7, "only the start may name the result"},
      {"f(x)", 1, "unknown function \"f\""},
      {"x y", 3, "after a complete expression"},
      {"(a b)", 4, "expected ',' or ')' to go with '(' at column 1"},
      {"log(a b)", 7, "expected ',' or ')' to go with '(' at column 4"},
      {"a and", 6, "the expression ends"},
      {"True = 3", 1, "cannot assign to True"},
      {"x + or", 5, "unexpected \"or\""},
      {"x \xc3\x97 2", 3, "byte 0xC3"},
      {"a +\xc3\x97", 4, "byte 0xC3"},
  };
  for (const BadExpression& bad : cases) {
    const ExpressionError error = ErrorOf(bad.text);
    EXPECT_EQ(error.column(), bad.column) << bad.text << ": " << error.what();
    EXPECT_NE(error.reason().find(bad.reason_part), std::string::npos)
        << bad.text << ": " << error.reason();
  }
}

TEST(ExpressionParserTest, MessageShowsTheExpressionWithACaret) {
  const ExpressionError error = ErrorOf("td = 1 / lg(t2)");
  EXPECT_STREQ(error.what(),
               "expression error at column 10: unknown function \"lg\"; did you mean \"log\"?\n"
               "  td = 1 / lg(t2)\n"
               "           ^");
  // Characters beyond ASCII count one column each; a tab shows as one space.
  const ExpressionError wide = ErrorOf("\"\xc3\xa9\" + \t$");
  EXPECT_EQ(wide.column(), 1);
  const ExpressionError tab = ErrorOf("a +\t$");
  EXPECT_EQ(tab.column(), 5);
  EXPECT_NE(std::string(tab.what()).find("  a + $\n      ^"), std::string::npos) << tab.what();
}

TEST(ExpressionParserTest, LongExpressionsShowAWindowAroundTheColumn) {
  std::string text;
  for (int term = 0; term < 100; ++term) text += "x + ";
  text += "$";
  const ExpressionError error = ErrorOf(text);
  EXPECT_EQ(error.column(), 401);
  const std::string what = error.what();
  const std::size_t line = what.find("\n  ...");
  ASSERT_NE(line, std::string::npos) << what;
  const std::size_t caret_line = what.find('\n', line + 1);
  const std::string shown = what.substr(line + 3, caret_line - line - 3);
  const std::string caret = what.substr(caret_line + 3);
  EXPECT_EQ(shown[caret.size() - 1], '$') << what;
}

TEST(ExpressionParserTest, NestingAndLengthAreBounded) {
  const auto nested = [](int levels) {
    return std::string(static_cast<std::size_t>(levels), '(') + "x" +
           std::string(static_cast<std::size_t>(levels), ')');
  };
  // The deepest nesting allowed parses, its parentheses gone, to the name alone.
  EXPECT_EQ(PrintSyntax(ParseExpression(nested(kMaxExpressionDepth))), "x");
  EXPECT_EQ(PrintSyntax(ParseExpression(nested(kMaxExpressionDepth - 1) + " + 1")), "add(x, 1)");
  const ExpressionError deep = ErrorOf(nested(kMaxExpressionDepth + 1));
  EXPECT_EQ(deep.column(), kMaxExpressionDepth + 1);
  EXPECT_NE(deep.reason().find("nests deeper than 200 levels"), std::string::npos);
  // Prefix operators, calls and long left-leaning chains are bounded alike.
  EXPECT_NE(ErrorOf(std::string(5000, '-') + "x").reason().find("deeper"), std::string::npos);
  std::string calls;
  for (int level = 0; level < 300; ++level) calls += "exp(";
  calls += "x" + std::string(300, ')');
  EXPECT_NE(ErrorOf(calls).reason().find("deeper"), std::string::npos);
  std::string chain = "x";
  for (int term = 0; term < 300; ++term) chain += "+x";
  EXPECT_NE(ErrorOf(chain).reason().find("deeper"), std::string::npos);
  EXPECT_NE(ErrorOf(std::string(kMaxExpressionLength + 1, ' ')).reason().find("at most 10000"),
            std::string::npos);
}

TEST(ExpressionFunctionsTest, KnowsNamesAliasesAndSuggestions) {
  ASSERT_NE(FindFunction("arcsin"), nullptr);
  EXPECT_EQ(FindFunction("arcsin")->name, "asin");
  EXPECT_EQ(FindFunction("count_nonzero")->kind, FunctionKind::kReduction);
  EXPECT_EQ(FindFunction("argmax")->kind, FunctionKind::kArgReduction);
  EXPECT_EQ(FindFunction("lg"), nullptr);
  EXPECT_EQ(ClosestName("lg", FunctionNames()), "log");
  EXPECT_EQ(ClosestName("sqr", FunctionNames()), "sqrt");
  EXPECT_EQ(ClosestName("maximun", FunctionNames()), "maximum");
  EXPECT_EQ(ClosestName("zzzzzz", FunctionNames()), "");
  EXPECT_TRUE(IsIdentifier("t2m"));
  EXPECT_TRUE(IsIdentifier("_x"));
  EXPECT_FALSE(IsIdentifier("2t"));
  EXPECT_FALSE(IsIdentifier("not"));
  EXPECT_FALSE(IsIdentifier("a-b"));
  EXPECT_FALSE(IsIdentifier(""));
}

}  // namespace
}  // namespace tessera::expression
