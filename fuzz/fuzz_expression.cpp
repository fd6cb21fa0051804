// Fuzzes the calculator's expression parser (src/api/expression_parser.hpp) with
// arbitrary text; no arrays are built.
//
// Contract checked: parsing either succeeds or throws ExpressionError (anything else
// escaping is a crash; so is a stack overflow, which kMaxExpressionDepth prevents); an
// error's column lies within the text or one past its end; what parses prints in call
// form, and that form parses again to the same print.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "expression_parser.hpp"
#include "tessera/api/expression.hpp"

namespace {

[[noreturn]] void Fail(const char* what, std::string_view detail) {
  std::fprintf(stderr, "fuzz_expression: %s\n%.*s\n", what, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

// Characters (UTF-8 lead bytes and stray bytes) in `text`: the largest column an error
// may point at is this + 1.
int CountColumns(std::string_view text) {
  int columns = 0;
  for (const char c : text) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++columns;
  }
  return columns;
}

std::optional<tessera::expression::ParsedExpression> Parse(std::string_view text) {
  try {
    return tessera::expression::ParseExpression(text);
  } catch (const tessera::ExpressionError& error) {
    const int limit = CountColumns(text.substr(0, tessera::kMaxExpressionLength)) + 1;
    if (error.column() < 1 || error.column() > limit) Fail("error column out of range", text);
    if (error.reason().empty()) Fail("error without a reason", text);
    return std::nullopt;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::optional<tessera::expression::ParsedExpression> parsed = Parse(text);
  if (!parsed) return 0;
  const std::string printed = tessera::expression::PrintSyntax(*parsed);
  if (printed.size() > tessera::kMaxExpressionLength) return 0;  // call form is wordier
  std::optional<tessera::expression::ParsedExpression> again;
  try {
    again = tessera::expression::ParseExpression(printed);
  } catch (const tessera::ExpressionError& error) {
    Fail("the printed form does not parse", printed + "\n" + error.what());
  }
  if (tessera::expression::PrintSyntax(*again) != printed) Fail("printing is unstable", printed);
  return 0;
}
