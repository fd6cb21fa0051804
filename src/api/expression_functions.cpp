#include "expression_functions.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <utility>

namespace tessera::expression {
namespace {

constexpr std::array<std::string_view, 0> kNoKeywords{};
constexpr std::array<std::string_view, 3> kSumKeywords{"axis", "keepdims", "dtype"};
constexpr std::array<std::string_view, 5> kVarKeywords{"axis", "keepdims", "correction", "ddof",
                                                       "dtype"};
constexpr std::array<std::string_view, 2> kMinKeywords{"axis", "keepdims"};

constexpr FunctionInfo Unary(std::string_view name) {
  return {name, FunctionKind::kUnary, kNoKeywords};
}
constexpr FunctionInfo Binary(std::string_view name) {
  return {name, FunctionKind::kBinary, kNoKeywords};
}

constexpr std::array kFunctions{
    Unary("negative"),
    Unary("positive"),
    Unary("abs"),
    Unary("sign"),
    Unary("square"),
    Unary("sqrt"),
    Unary("exp"),
    Unary("expm1"),
    Unary("log"),
    Unary("log1p"),
    Unary("log2"),
    Unary("log10"),
    Unary("sin"),
    Unary("cos"),
    Unary("tan"),
    Unary("asin"),
    Unary("acos"),
    Unary("atan"),
    Unary("sinh"),
    Unary("cosh"),
    Unary("tanh"),
    Unary("asinh"),
    Unary("acosh"),
    Unary("atanh"),
    Unary("floor"),
    Unary("ceil"),
    Unary("trunc"),
    Unary("round"),
    Unary("isnan"),
    Unary("isinf"),
    Unary("isfinite"),
    Unary("logical_not"),
    Unary("bitwise_invert"),
    Binary("add"),
    Binary("subtract"),
    Binary("multiply"),
    Binary("divide"),
    Binary("floor_divide"),
    Binary("remainder"),
    Binary("pow"),
    Binary("maximum"),
    Binary("minimum"),
    Binary("atan2"),
    Binary("hypot"),
    Binary("logaddexp"),
    Binary("copysign"),
    Binary("equal"),
    Binary("not_equal"),
    Binary("less"),
    Binary("less_equal"),
    Binary("greater"),
    Binary("greater_equal"),
    Binary("logical_and"),
    Binary("logical_or"),
    Binary("logical_xor"),
    Binary("bitwise_and"),
    Binary("bitwise_or"),
    Binary("bitwise_xor"),
    Binary("bitwise_left_shift"),
    Binary("bitwise_right_shift"),
    FunctionInfo{"where", FunctionKind::kWhere, kNoKeywords},
    FunctionInfo{"astype", FunctionKind::kAsType, kNoKeywords},
    FunctionInfo{"sum", FunctionKind::kReduction, kSumKeywords},
    FunctionInfo{"prod", FunctionKind::kReduction, kSumKeywords},
    FunctionInfo{"mean", FunctionKind::kReduction, kSumKeywords},
    FunctionInfo{"var", FunctionKind::kReduction, kVarKeywords},
    FunctionInfo{"std", FunctionKind::kReduction, kVarKeywords},
    FunctionInfo{"min", FunctionKind::kReduction, kMinKeywords},
    FunctionInfo{"max", FunctionKind::kReduction, kMinKeywords},
    FunctionInfo{"all", FunctionKind::kReduction, kMinKeywords},
    FunctionInfo{"any", FunctionKind::kReduction, kMinKeywords},
    FunctionInfo{"count_nonzero", FunctionKind::kReduction, kMinKeywords},
    FunctionInfo{"argmin", FunctionKind::kArgReduction, kMinKeywords},
    FunctionInfo{"argmax", FunctionKind::kArgReduction, kMinKeywords},
};

// numpy's names for functions the array API names otherwise.
constexpr std::array<std::pair<std::string_view, std::string_view>, 11> kAliases{{
    {"arcsin", "asin"},
    {"arccos", "acos"},
    {"arctan", "atan"},
    {"arcsinh", "asinh"},
    {"arccosh", "acosh"},
    {"arctanh", "atanh"},
    {"arctan2", "atan2"},
    {"power", "pow"},
    {"absolute", "abs"},
    {"invert", "bitwise_invert"},
    {"mod", "remainder"},
}};

}  // namespace

std::string Usage(const FunctionInfo& info) {
  const std::string name(info.name);
  switch (info.kind) {
    case FunctionKind::kUnary:
      return name + "(x)";
    case FunctionKind::kBinary:
      return name + "(x, y)";
    case FunctionKind::kWhere:
      return "where(condition, x, y)";
    case FunctionKind::kAsType:
      return "astype(x, dtype)";
    case FunctionKind::kReduction:
    case FunctionKind::kArgReduction: {
      std::string usage = name + "(x, axis=None";
      for (const std::string_view keyword : info.keywords) {
        if (keyword != "axis") usage += ", " + std::string(keyword) + "=...";
      }
      return usage + ")";
    }
  }
  return name;
}

int PositionalCount(FunctionKind kind) {
  switch (kind) {
    case FunctionKind::kUnary:
      return 1;
    case FunctionKind::kBinary:
    case FunctionKind::kAsType:
      return 2;
    case FunctionKind::kWhere:
      return 3;
    case FunctionKind::kReduction:
    case FunctionKind::kArgReduction:
      return 2;  // x, and optionally axis
  }
  return 1;
}

const FunctionInfo* FindFunction(std::string_view name) {
  for (const auto& [alias, canonical] : kAliases) {
    if (alias == name) name = canonical;
  }
  for (const FunctionInfo& info : kFunctions) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

std::vector<std::string_view> FunctionNames() {
  std::vector<std::string_view> names;
  for (const FunctionInfo& info : kFunctions) names.push_back(info.name);
  for (const auto& [alias, canonical] : kAliases) names.push_back(alias);
  return names;
}

std::string_view ClosestName(std::string_view name, std::span<const std::string_view> candidates) {
  // Levenshtein distance, one row at a time; names are short.
  const auto distance = [](std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t column = 0; column <= b.size(); ++column) row[column] = column;
    for (std::size_t line = 1; line <= a.size(); ++line) {
      std::size_t diagonal = row[0];
      row[0] = line;
      for (std::size_t column = 1; column <= b.size(); ++column) {
        const std::size_t above = row[column];
        row[column] = std::min({row[column] + 1, row[column - 1] + 1,
                                diagonal + (a[line - 1] == b[column - 1] ? 0 : 1)});
        diagonal = above;
      }
    }
    return row[b.size()];
  };
  constexpr std::size_t kLongestCompared = 64;  // a typo of a name is short
  if (name.size() > kLongestCompared) return {};
  const std::size_t allowed = name.size() <= 4 ? 1 : 2;
  std::string_view best;
  std::size_t best_distance = allowed + 1;
  for (const std::string_view candidate : candidates) {
    const std::size_t found = distance(name, candidate);
    if (found < best_distance) {
      best = candidate;
      best_distance = found;
    }
  }
  return best;
}

}  // namespace tessera::expression
