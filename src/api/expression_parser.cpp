#include "expression_parser.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <optional>
#include <system_error>
#include <utility>

#include "tessera/api/expression.hpp"
#include "tessera/plan/internal/node.hpp"

namespace tessera::expression {

using planner::MakeBinary;
namespace {

constexpr std::array<std::string_view, 6> kKeywords{"and", "or", "not", "True", "False", "None"};

// ---- tokens --------------------------------------------------------------------------

enum class TokenKind { kNumber, kName, kSymbol, kEnd };

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string_view text;
  int column = 1;
  Scalar number;
};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsNameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsNameChar(char c) { return IsNameStart(c) || IsDigit(c); }

// Symbols, longest first so "**" wins over "*".
constexpr std::array<std::string_view, 23> kSymbols{"**", "//", "<=", ">=", "==", "!=", "<<", ">>",
                                                    "+",  "-",  "*",  "/",  "%",  "<",  ">",  "&",
                                                    "|",  "^",  "~",  "(",  ")",  ",",  "="};

// "'$'", or U+00D7 for a character beyond ASCII, or byte 0xFF.
std::string DescribeCharacter(std::string_view text, std::size_t at) {
  const auto byte = static_cast<unsigned char>(text[at]);
  if (byte >= 0x20 && byte < 0x7F) return "'" + std::string(1, text[at]) + "'";
  std::array<char, 3> hex{};
  constexpr std::string_view kDigits = "0123456789ABCDEF";
  hex[0] = kDigits[byte >> 4];
  hex[1] = kDigits[byte & 0xF];
  if (byte < 0x80) return "control character 0x" + std::string(hex.data(), 2);
  return "byte 0x" + std::string(hex.data(), 2) +
         " (only ASCII letters, digits, operators and spaces may appear)";
}

class Tokenizer {
 public:
  explicit Tokenizer(std::string_view text) : text_(text) {}

  std::vector<Token> Tokenize() {
    std::vector<Token> tokens;
    while (true) {
      SkipSpaces();
      Token token;
      token.column = column_;
      if (at_ == text_.size()) {
        tokens.push_back(token);
        return tokens;
      }
      const char c = text_[at_];
      if (IsDigit(c) || (c == '.' && at_ + 1 < text_.size() && IsDigit(text_[at_ + 1]))) {
        token = Number();
      } else if (IsNameStart(c)) {
        const std::size_t start = at_;
        while (at_ < text_.size() && IsNameChar(text_[at_])) ++at_;
        token.kind = TokenKind::kName;
        token.text = text_.substr(start, at_ - start);
        column_ += static_cast<int>(at_ - start);
      } else {
        token = Symbol();
      }
      tokens.push_back(token);
    }
  }

 private:
  void SkipSpaces() {
    while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\t')) {
      ++at_;
      ++column_;
    }
  }

  Token Symbol() {
    for (const std::string_view symbol : kSymbols) {
      if (text_.substr(at_).starts_with(symbol)) {
        Token token{TokenKind::kSymbol, symbol, column_, {}};
        at_ += symbol.size();
        column_ += static_cast<int>(symbol.size());
        return token;
      }
    }
    std::string reason = "unexpected " + DescribeCharacter(text_, at_);
    if (text_[at_] == '!') reason += "; write != for 'not equal', or not/~ for negation";
    if (text_[at_] == '[') reason += "; indexing is not supported, only whole arrays";
    throw ExpressionError(text_, column_, reason);
  }

  // digits [. digits] [e [+-] digits], or . digits ...: an int64 unless it has a point
  // or an exponent.
  Token Number() {
    const std::size_t start = at_;
    const int column = column_;
    bool is_float = false;
    while (at_ < text_.size() && IsDigit(text_[at_])) ++at_;
    if (at_ < text_.size() && text_[at_] == '.') {
      is_float = true;
      ++at_;
      while (at_ < text_.size() && IsDigit(text_[at_])) ++at_;
    }
    if (at_ < text_.size() && (text_[at_] == 'e' || text_[at_] == 'E')) {
      is_float = true;
      ++at_;
      if (at_ < text_.size() && (text_[at_] == '+' || text_[at_] == '-')) ++at_;
      if (at_ == text_.size() || !IsDigit(text_[at_])) {
        throw ExpressionError(text_, column,
                              "malformed number \"" +
                                  std::string(text_.substr(start, at_ - start)) +
                                  "\": the exponent has no digits (e.g. 1e-3)");
      }
      while (at_ < text_.size() && IsDigit(text_[at_])) ++at_;
    }
    const std::string_view text = text_.substr(start, at_ - start);
    if (at_ < text_.size() && (IsNameChar(text_[at_]) || text_[at_] == '.')) {
      std::size_t end = at_;
      while (end < text_.size() && (IsNameChar(text_[end]) || text_[end] == '.')) ++end;
      throw ExpressionError(text_, column,
                            "malformed number \"" + std::string(text_.substr(start, end - start)) +
                                "\"; a number cannot run into a name (write 2*x, not 2x)");
    }
    Token token{TokenKind::kNumber, text, column, {}};
    if (is_float) {
      double value = 0;
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (error != std::errc() || end != text.data() + text.size()) {
        throw ExpressionError(text_, column,
                              "number " + std::string(text) + " is out of a double's range");
      }
      token.number = value;
    } else {
      std::int64_t value = 0;
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (error != std::errc() || end != text.data() + text.size()) {
        throw ExpressionError(text_, column,
                              "integer " + std::string(text) +
                                  " does not fit in 64 bits; write it with a decimal point "
                                  "or an exponent (e.g. 1e20) for a float");
      }
      token.number = value;
    }
    column_ += static_cast<int>(text.size());
    return token;
  }

  std::string_view text_;
  std::size_t at_ = 0;
  int column_ = 1;
};

// ---- the parser ----------------------------------------------------------------------

// A binary operator of one precedence level and its array API function.
struct BinaryOperator {
  std::string_view symbol;
  std::string_view function;
};

// Python's binary operators from | to the multiplicative ones, loosest first.
const std::vector<std::vector<BinaryOperator>>& BinaryLevels() {
  static const std::vector<std::vector<BinaryOperator>> levels{
      {{"|", "bitwise_or"}},
      {{"^", "bitwise_xor"}},
      {{"&", "bitwise_and"}},
      {{"<<", "bitwise_left_shift"}, {">>", "bitwise_right_shift"}},
      {{"+", "add"}, {"-", "subtract"}},
      {{"*", "multiply"}, {"/", "divide"}, {"//", "floor_divide"}, {"%", "remainder"}},
  };
  return levels;
}

constexpr std::array<BinaryOperator, 6> kComparisons{{{"<", "less"},
                                                      {"<=", "less_equal"},
                                                      {">", "greater"},
                                                      {">=", "greater_equal"},
                                                      {"==", "equal"},
                                                      {"!=", "not_equal"}}};

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text), tokens_(Tokenizer(text).Tokenize()) {}

  ParsedExpression Parse() {
    ParsedExpression parsed;
    if (Peek().kind == TokenKind::kEnd) Fail(Peek().column, "the expression is empty");
    if (Peek().kind == TokenKind::kName && Peek(1).kind == TokenKind::kSymbol &&
        Peek(1).text == "=") {
      const Token& target = Next();
      if (IsKeyword(target.text)) {
        Fail(target.column, "cannot assign to " + std::string(target.text) + "; name the result " +
                                "with an identifier, e.g. result = ...");
      }
      parsed.target = std::string(target.text);
      parsed.target_column = target.column;
      Next();  // '='
      if (Peek().kind == TokenKind::kEnd) {
        Fail(Peek().column, "nothing follows '" + parsed.target + " ='; give the expression " +
                                "whose result is " + parsed.target);
      }
    }
    parsed.root = ParseOr();
    const Token& rest = Peek();
    if (rest.kind != TokenKind::kEnd) {
      if (rest.text == ")") Fail(rest.column, "unmatched ')'");
      if (rest.text == "=") {
        Fail(rest.column,
             "unexpected '='; only the start may name the result (NAME = EXPR); compare with ==");
      }
      Fail(rest.column, "unexpected " + Describe(rest) + " after a complete expression; " +
                            "an operator or ',' inside a call was expected before it");
    }
    return parsed;
  }

 private:
  [[noreturn]] void Fail(int column, std::string reason) const {
    throw ExpressionError(text_, column, std::move(reason));
  }

  const Token& Peek(std::size_t ahead = 0) const {
    return tokens_[std::min(position_ + ahead, tokens_.size() - 1)];
  }
  const Token& Next() {
    const Token& token = tokens_[position_];
    if (position_ + 1 < tokens_.size()) ++position_;
    return token;
  }
  bool PeekSymbol(std::string_view symbol) const {
    return Peek().kind == TokenKind::kSymbol && Peek().text == symbol;
  }
  bool PeekWord(std::string_view word) const {
    return Peek().kind == TokenKind::kName && Peek().text == word;
  }

  static std::string Describe(const Token& token) {
    switch (token.kind) {
      case TokenKind::kEnd:
        return "end of expression";
      case TokenKind::kNumber:
        return "number " + std::string(token.text);
      case TokenKind::kName:
        return "name \"" + std::string(token.text) + "\"";
      case TokenKind::kSymbol:
        return "'" + std::string(token.text) + "'";
    }
    return "token";
  }

  // One more level of nesting at `column` (a prefix operator, '(' or a call's
  // arguments); the guard gives it back when it goes out of scope.
  class Nesting {
   public:
    Nesting(Parser& parser, int column) : parser_(parser) {
      if (++parser_.nesting_ > kMaxExpressionDepth) parser_.FailTooDeep(column);
    }
    ~Nesting() { --parser_.nesting_; }
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;

   private:
    Parser& parser_;
  };

  [[noreturn]] void FailTooDeep(int column) const {
    Fail(column, "the expression nests deeper than " + std::to_string(kMaxExpressionDepth) +
                     " levels (each parenthesis, call and operator on one path counts); split "
                     "it or simplify it");
  }

  // A node of `kind` over `arguments`, its depth checked.
  SyntaxNode Make(SyntaxNode::Kind kind, const Token& token, std::string function,
                  std::vector<SyntaxNode> arguments) const {
    SyntaxNode node;
    node.kind = kind;
    node.column = token.column;
    node.text = std::string(token.text);
    node.function = std::move(function);
    for (const SyntaxNode& argument : arguments) node.depth = std::max(node.depth, argument.depth);
    node.depth += 1;
    if (node.depth > kMaxExpressionDepth) FailTooDeep(token.column);
    node.arguments = std::move(arguments);
    return node;
  }

  SyntaxNode MakeBinary(const Token& token, std::string_view function, SyntaxNode left,
                        SyntaxNode right) const {
    std::vector<SyntaxNode> operands;
    operands.push_back(std::move(left));
    operands.push_back(std::move(right));
    return Make(SyntaxNode::Kind::kBinary, token, std::string(function), std::move(operands));
  }

  SyntaxNode ParseOr() { return ParseWordOperator("or", "logical_or", &Parser::ParseAnd); }
  SyntaxNode ParseAnd() { return ParseWordOperator("and", "logical_and", &Parser::ParseNot); }

  // `word` (or, and) as a left-associative operator over what `operand` parses.
  SyntaxNode ParseWordOperator(std::string_view word, std::string_view function,
                               SyntaxNode (Parser::*operand)()) {
    SyntaxNode left = (this->*operand)();
    while (PeekWord(word)) {
      const Token& op = Next();
      left = MakeBinary(op, function, std::move(left), (this->*operand)());
    }
    return left;
  }

  SyntaxNode ParseNot() {
    if (!PeekWord("not")) return ParseComparison();
    const Token& op = Next();
    const Nesting nesting(*this, op.column);
    std::vector<SyntaxNode> operand;
    operand.push_back(ParseNot());
    return Make(SyntaxNode::Kind::kUnary, op, "logical_not", std::move(operand));
  }

  static const BinaryOperator* FindOperator(std::span<const BinaryOperator> operators,
                                            const Token& token) {
    if (token.kind != TokenKind::kSymbol) return nullptr;
    for (const BinaryOperator& op : operators) {
      if (op.symbol == token.text) return &op;
    }
    return nullptr;
  }

  SyntaxNode ParseComparison() {
    SyntaxNode left = ParseBinary(0);
    const BinaryOperator* op = FindOperator(kComparisons, Peek());
    if (op == nullptr) return left;
    const Token& token = Next();
    SyntaxNode compared = MakeBinary(token, op->function, std::move(left), ParseBinary(0));
    if (FindOperator(kComparisons, Peek()) != nullptr) {
      Fail(Peek().column, "comparisons cannot be chained (a < b < c); write (a < b) & (b < c)");
    }
    return compared;
  }

  // Left-associative binary operators of BinaryLevels()[level] and tighter ones.
  SyntaxNode ParseBinary(std::size_t level) {
    if (level == BinaryLevels().size()) return ParseUnary();
    SyntaxNode left = ParseBinary(level + 1);
    while (const BinaryOperator* op = FindOperator(BinaryLevels()[level], Peek())) {
      const Token& token = Next();
      left = MakeBinary(token, op->function, std::move(left), ParseBinary(level + 1));
    }
    return left;
  }

  SyntaxNode ParseUnary() {
    static constexpr std::array<BinaryOperator, 3> kPrefix{
        {{"-", "negative"}, {"+", "positive"}, {"~", "bitwise_invert"}}};
    const BinaryOperator* op = FindOperator(kPrefix, Peek());
    if (op == nullptr) return ParsePower();
    const Token& token = Next();
    const Nesting nesting(*this, token.column);
    std::vector<SyntaxNode> operand;
    operand.push_back(ParseUnary());
    return Make(SyntaxNode::Kind::kUnary, token, std::string(op->function), std::move(operand));
  }

  // primary [** unary]: the exponent may carry its own sign (x**-1) and is itself a
  // power, so ** groups to the right; a sign before the base applies to the power.
  SyntaxNode ParsePower() {
    SyntaxNode base = ParsePrimary();
    if (!PeekSymbol("**")) return base;
    const Token& token = Next();
    const Nesting nesting(*this, token.column);
    return MakeBinary(token, "pow", std::move(base), ParseUnary());
  }

  SyntaxNode ParsePrimary() {
    const Token& token = Peek();
    switch (token.kind) {
      case TokenKind::kNumber: {
        Next();
        SyntaxNode node;
        node.kind = SyntaxNode::Kind::kNumber;
        node.column = token.column;
        node.text = std::string(token.text);
        node.number = token.number;
        return node;
      }
      case TokenKind::kName:
        return ParseName();
      case TokenKind::kSymbol:
        if (token.text == "(") return ParseParentheses();
        break;
      case TokenKind::kEnd:
        Fail(token.column, "the expression ends where a number, a name or '(' was expected");
    }
    std::string reason =
        "unexpected " + Describe(token) + " where a number, a name or '(' " + "was expected";
    if (token.text == "*" || token.text == "/" || token.text == "**" || token.text == "//" ||
        token.text == "%") {
      reason += " (an operand is missing before it)";
    }
    Fail(token.column, reason);
  }

  SyntaxNode ParseName() {
    const Token& token = Next();
    SyntaxNode node;
    node.column = token.column;
    node.text = std::string(token.text);
    if (token.text == "True" || token.text == "False") {
      node.number = token.text == "True";
      return node;
    }
    if (token.text == "None") {
      node.kind = SyntaxNode::Kind::kNone;
      return node;
    }
    if (IsKeyword(token.text)) {
      Fail(token.column,
           "unexpected \"" + std::string(token.text) + "\" where an operand was " + "expected");
    }
    if (PeekSymbol("(")) return ParseCall(token);
    node.kind = SyntaxNode::Kind::kName;
    return node;
  }

  // ( ) is the empty tuple, (x) is x, (x,) and (x, y) are tuples.
  SyntaxNode ParseParentheses() {
    const Token& open = Next();
    const Nesting nesting(*this, open.column);
    std::vector<SyntaxNode> items;
    bool tuple = false;
    while (!PeekSymbol(")")) {
      if (Peek().kind == TokenKind::kEnd) {
        Fail(open.column, "'(' at column " + std::to_string(open.column) + " is never closed");
      }
      items.push_back(ParseOr());
      if (PeekSymbol(",")) {
        Next();
        tuple = true;
      } else if (!PeekSymbol(")")) {
        ExpectClosing(open);
      }
    }
    Next();
    if (items.size() == 1 && !tuple) return std::move(items.front());
    return Make(SyntaxNode::Kind::kTuple, open, "", std::move(items));
  }

  // Fails at what stands where ')' of `open` (or ',') should be.
  [[noreturn]] void ExpectClosing(const Token& open) const {
    if (Peek().kind == TokenKind::kEnd) {
      Fail(open.column, "'(' at column " + std::to_string(open.column) + " is never closed");
    }
    if (PeekSymbol("=")) {
      Fail(Peek().column,
           "unexpected '='; keyword arguments (axis=0) go inside a call's "
           "parentheses after a name; compare with ==");
    }
    Fail(Peek().column, "expected ',' or ')' to go with '(' at column " +
                            std::to_string(open.column) + ", found " + Describe(Peek()));
  }

  SyntaxNode ParseCall(const Token& name) {
    const FunctionInfo* info = FindFunction(name.text);
    if (info == nullptr) {
      const std::vector<std::string_view> names = FunctionNames();
      const std::string_view closest = ClosestName(name.text, names);
      Fail(name.column, "unknown function \"" + std::string(name.text) + "\"" +
                            (closest.empty() ? std::string("; docs/compute.md and `tessera calc "
                                                           "--help` list the functions")
                                             : "; did you mean \"" + std::string(closest) + "\"?"));
    }
    const Token& open = Next();
    const Nesting nesting(*this, open.column);
    std::vector<SyntaxNode> arguments;
    std::size_t positional = 0;
    while (!PeekSymbol(")")) {
      if (Peek().kind == TokenKind::kEnd) ExpectClosing(open);
      const Token& start = Peek();
      if (start.kind == TokenKind::kName && Peek(1).kind == TokenKind::kSymbol &&
          Peek(1).text == "=") {
        Next();
        Next();
        SyntaxNode value = ParseOr();
        CheckKeyword(*info, start, arguments, positional);
        value.keyword = std::string(start.text);
        value.keyword_column = start.column;
        arguments.push_back(std::move(value));
      } else {
        SyntaxNode value = ParseOr();
        if (positional < arguments.size()) {
          Fail(start.column, "a positional argument cannot follow keyword arguments in " +
                                 std::string(name.text) + "(); give it first or by keyword");
        }
        if (static_cast<int>(positional) == PositionalCount(info->kind)) {
          Fail(start.column, std::string(name.text) + "() takes at most " +
                                 std::to_string(PositionalCount(info->kind)) +
                                 " positional arguments: " + Usage(*info));
        }
        if (positional == 1 &&
            (info->kind == FunctionKind::kReduction || info->kind == FunctionKind::kArgReduction)) {
          value.keyword = "axis";  // sum(x, 0) is sum(x, axis=0)
          value.keyword_column = start.column;
        }
        ++positional;
        arguments.push_back(std::move(value));
      }
      if (PeekSymbol(",")) {
        Next();
      } else if (!PeekSymbol(")")) {
        ExpectClosing(open);
      }
    }
    const Token& close = Next();
    const bool reduction =
        info->kind == FunctionKind::kReduction || info->kind == FunctionKind::kArgReduction;
    const std::size_t needed =
        reduction ? 1 : static_cast<std::size_t>(PositionalCount(info->kind));
    if (positional < needed) {
      Fail(close.column, std::string(name.text) + "() needs " + std::to_string(needed) +
                             (needed == 1 ? " argument" : " arguments") + ", got " +
                             std::to_string(positional) + ": " + Usage(*info));
    }
    return Make(SyntaxNode::Kind::kCall, name, std::string(info->name), std::move(arguments));
  }

  void CheckKeyword(const FunctionInfo& info, const Token& keyword,
                    const std::vector<SyntaxNode>& arguments, std::size_t positional) const {
    const std::string name(info.name);
    if (std::find(info.keywords.begin(), info.keywords.end(), keyword.text) ==
        info.keywords.end()) {
      std::string reason = name + "() has no keyword \"" + std::string(keyword.text) + "\"";
      const std::string_view closest = ClosestName(keyword.text, info.keywords);
      if (!closest.empty()) reason += "; did you mean \"" + std::string(closest) + "\"?";
      reason += info.keywords.empty() ? "; it takes no keywords: " + Usage(info)
                                      : "; it is called as " + Usage(info);
      Fail(keyword.column, reason);
    }
    for (const SyntaxNode& argument : arguments) {
      const bool same = argument.keyword == keyword.text ||
                        (argument.keyword == "ddof" && keyword.text == "correction") ||
                        (argument.keyword == "correction" && keyword.text == "ddof");
      if (same) {
        Fail(keyword.column, name + "() got " + std::string(keyword.text) + " twice" +
                                 (positional > 1 && keyword.text == "axis"
                                      ? " (the second positional argument is axis)"
                                      : ""));
      }
    }
  }

  std::string_view text_;
  std::vector<Token> tokens_;
  std::size_t position_ = 0;
  int nesting_ = 0;
};

// ---- printing ----------------------------------------------------------------------

std::string PrintNumber(const Scalar& number) {
  if (const bool* flag = std::get_if<bool>(&number.value())) return *flag ? "True" : "False";
  if (const std::int64_t* integer = std::get_if<std::int64_t>(&number.value())) {
    return std::to_string(*integer);
  }
  if (const std::uint64_t* natural = std::get_if<std::uint64_t>(&number.value())) {
    return std::to_string(*natural);
  }
  std::array<char, 64> buffer{};
  const double value = std::get<double>(number.value());
  const auto [end, error] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  std::string text(buffer.data(), error == std::errc() ? end : buffer.data());
  if (text.find_first_of(".en") == std::string::npos) text += ".0";  // stays a float
  return text;
}

void Print(const SyntaxNode& node, std::string& out) {
  if (!node.keyword.empty()) out += node.keyword + "=";
  switch (node.kind) {
    case SyntaxNode::Kind::kNumber:
      out += PrintNumber(node.number);
      return;
    case SyntaxNode::Kind::kName:
      out += node.text;
      return;
    case SyntaxNode::Kind::kNone:
      out += "None";
      return;
    case SyntaxNode::Kind::kTuple:
      out += "(";
      break;
    case SyntaxNode::Kind::kUnary:
    case SyntaxNode::Kind::kBinary:
    case SyntaxNode::Kind::kCall:
      out += node.function + "(";
      break;
  }
  for (std::size_t index = 0; index < node.arguments.size(); ++index) {
    if (index > 0) out += ", ";
    Print(node.arguments[index], out);
  }
  if (node.kind == SyntaxNode::Kind::kTuple && node.arguments.size() == 1) out += ",";
  out += ")";
}

}  // namespace

ParsedExpression ParseExpression(std::string_view text) {
  if (text.size() > kMaxExpressionLength) {
    throw ExpressionError(text.substr(0, kMaxExpressionLength), 1,
                          "the expression is " + std::to_string(text.size()) +
                              " characters long; at most " + std::to_string(kMaxExpressionLength) +
                              " are accepted");
  }
  return Parser(text).Parse();
}

std::string PrintSyntax(const SyntaxNode& node) {
  std::string out;
  Print(node, out);
  return out;
}

std::string PrintSyntax(const ParsedExpression& parsed) {
  return (parsed.target.empty() ? "" : parsed.target + " = ") + PrintSyntax(parsed.root);
}

bool IsKeyword(std::string_view word) {
  return std::find(kKeywords.begin(), kKeywords.end(), word) != kKeywords.end();
}

bool IsIdentifier(std::string_view word) {
  if (word.empty() || !IsNameStart(word.front()) || IsKeyword(word)) return false;
  return std::all_of(word.begin(), word.end(), IsNameChar);
}

}  // namespace tessera::expression
