#include "tessera/api/expression_error.hpp"

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace tessera {
namespace {

// Characters shown around the caret when the expression is longer than a line.
constexpr int kShownBefore = 60;
constexpr int kShownAfter = 40;

// Byte length of the UTF-8 character at `text[at]`; 1 for a byte that does not start a
// valid sequence (shown as '?').
std::size_t CharacterLength(std::string_view text, std::size_t at) {
  const auto lead = static_cast<unsigned char>(text[at]);
  std::size_t length = 1;
  if (lead >= 0xF0 && lead < 0xF5) {
    length = 4;
  } else if (lead >= 0xE0) {
    length = lead < 0xF0 ? 3 : 1;
  } else if (lead >= 0xC2) {
    length = 2;
  }
  if (at + length > text.size()) return 1;
  for (std::size_t next = at + 1; next < at + length; ++next) {
    if ((static_cast<unsigned char>(text[next]) & 0xC0) != 0x80) return 1;
  }
  return length;
}

// The expression on one line, control characters and broken UTF-8 replaced so the caret
// lines up, cut to a window around `column` when long; a caret line below it.
std::string Excerpt(std::string_view expression, int column) {
  std::vector<std::string> characters;
  for (std::size_t at = 0; at < expression.size();) {
    const std::size_t length = CharacterLength(expression, at);
    const auto byte = static_cast<unsigned char>(expression[at]);
    if (length > 1) {
      characters.emplace_back(expression.substr(at, length));
    } else if (byte < 0x20 || byte == 0x7F) {
      characters.emplace_back(" ");
    } else if (byte >= 0x80) {
      characters.emplace_back("?");
    } else {
      characters.emplace_back(1, static_cast<char>(byte));
    }
    at += length;
  }
  const int count = static_cast<int>(characters.size());
  int first = 0;
  int last = count;
  if (count > kShownBefore + kShownAfter) {
    first = std::max(0, column - 1 - kShownBefore);
    last = std::min(count, column - 1 + kShownAfter);
  }
  std::string line = first > 0 ? "..." : "";
  const int caret = static_cast<int>(line.size()) + column - 1 - first;
  for (int index = first; index < last; ++index) {
    line += characters[static_cast<std::size_t>(index)];
  }
  if (last < count) line += "...";
  return "  " + line + "\n  " + std::string(static_cast<std::size_t>(std::max(0, caret)), ' ') +
         "^";
}

}  // namespace

ExpressionError::ExpressionError(std::string_view expression, int column, std::string reason)
    : InvalidArgument("expression error at column " + std::to_string(column) + ": " + reason +
                      "\n" + Excerpt(expression, column)),
      column_(column),
      reason_(std::move(reason)) {}

}  // namespace tessera
