// The calculator's function table: every function an expression may call, its kind
// (which fixes its positional arguments) and its keywords; and the typo suggestions of
// its error messages. No arrays involved (the parser and its fuzzer use it).
//
//   const FunctionInfo* info = FindFunction("arctan2");  // the entry of "atan2"
//   Usage(*info);                                        // "atan2(x, y)"
//   ClosestName("lg", FunctionNames());                  // "log"
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::expression {

// The functions the calculator knows.
enum class FunctionKind { kUnary, kBinary, kWhere, kAsType, kReduction, kArgReduction };
struct FunctionInfo {
  std::string_view name;  // canonical: the array API name
  FunctionKind kind;
  // Keywords it accepts; reductions also take axis as their second positional argument.
  std::span<const std::string_view> keywords;
};
// nullptr when unknown; numpy aliases (arcsin, power, ...) give the canonical entry.
const FunctionInfo* FindFunction(std::string_view name);
// Every name FindFunction knows, aliases included (for suggestions).
std::vector<std::string_view> FunctionNames();

// The candidate closest to `name` by edit distance when close enough to be a likely
// typo (at most 1 edit for names up to 4 characters, 2 beyond), else "".
std::string_view ClosestName(std::string_view name, std::span<const std::string_view> candidates);

// How `info` is called, for messages: "log(x)", "sum(x, axis=None, keepdims=..., dtype=...)".
std::string Usage(const FunctionInfo& info);
// The most positional arguments `kind` takes (reductions: x and axis).
int PositionalCount(FunctionKind kind);

}  // namespace tessera::expression
