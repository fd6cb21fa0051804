#include "expression_functions.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <string>

#include "tessera/plan/internal/elementwise_table.hpp"

namespace tessera::expression {
namespace {

constexpr std::array<std::string_view, 0> kNoKeywords{};
constexpr std::array<std::string_view, 3> kSumKeywords{"axis", "keepdims", "dtype"};
constexpr std::array<std::string_view, 5> kVarKeywords{"axis", "keepdims", "correction", "ddof",
                                                       "dtype"};
constexpr std::array<std::string_view, 2> kMinKeywords{"axis", "keepdims"};

// The calculator's functions beyond the elementwise ones.
constexpr std::array kOtherFunctions{
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

// Every elementwise op of the table (elementwise_ops.def), then the others.
constexpr auto kFunctions = [] {
  std::array<FunctionInfo, kernels::ElementwiseOps().size() + kOtherFunctions.size()> all{};
  std::size_t index = 0;
  for (const kernels::ElementwiseOp& op : kernels::ElementwiseOps()) {
    all[index++] = {op.name, op.arity == 1 ? FunctionKind::kUnary : FunctionKind::kBinary,
                    kNoKeywords};
  }
  for (const FunctionInfo& info : kOtherFunctions) all[index++] = info;
  return all;
}();

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
  // numpy's aliases (arcsin, power, ...) are the elementwise table's.
  if (const kernels::ElementwiseOp* op = kernels::FindElementwiseOp(name)) name = op->name;
  for (const FunctionInfo& info : kFunctions) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

std::vector<std::string_view> FunctionNames() {
  std::vector<std::string_view> names;
  for (const FunctionInfo& info : kFunctions) names.push_back(info.name);
  for (const kernels::ElementwiseOp& op : kernels::ElementwiseOps()) {
    kernels::ForEachAlias(op, [&](std::string_view alias) { names.push_back(alias); });
  }
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
