#include "op_lookup.hpp"

#include <cstddef>
#include <optional>
#include <string>

#include "tessera/core/errors.hpp"
#include "tessera/plan/internal/elementwise_table.hpp"

namespace tessera::kernels {
namespace {

// The table lists the unary ops first, then the binary ones, each in its enum's order
// (both are made from elementwise_ops.def), so an enumerator indexes its row.
constexpr std::size_t CountOfArity(int arity) {
  std::size_t count = 0;
  for (const ElementwiseOp& op : ElementwiseOps()) count += op.arity == arity ? 1 : 0;
  return count;
}
constexpr std::size_t kUnaryCount = CountOfArity(1);
constexpr std::size_t kBinaryCount = CountOfArity(2);
static_assert(kUnaryCount + kBinaryCount == ElementwiseOps().size(), "arity 1 or 2 only");
static_assert(
    [] {
      for (std::size_t index = 0; index < ElementwiseOps().size(); ++index) {
        if ((ElementwiseOps()[index].arity == 1) != (index < kUnaryCount)) return false;
      }
      return true;
    }(),
    "elementwise_ops.def lists every unary op before the binary ones");

// Every name and alias names one op: the calculator and the API look them up by name.
static_assert(
    [] {
      for (const ElementwiseOp& op : ElementwiseOps()) {
        int found = 0;
        const auto count = [&](std::string_view name) {
          for (const ElementwiseOp& other : ElementwiseOps()) {
            found += other.name == name ? 1 : 0;
            ForEachAlias(other, [&](std::string_view alias) { found += alias == name ? 1 : 0; });
          }
        };
        count(op.name);
        ForEachAlias(op, count);
        int names = 1;
        ForEachAlias(op, [&](std::string_view) { ++names; });
        if (found != names) return false;
      }
      return true;
    }(),
    "a name or alias of elementwise_ops.def is given twice");

template <class Op>
std::optional<Op> Find(std::string_view name, int arity) {
  std::size_t index = 0;
  for (const ElementwiseOp& op : ElementwiseOps()) {
    if (op.arity != arity) continue;
    if (op.name == name) return static_cast<Op>(index);
    ++index;
  }
  return std::nullopt;
}

std::string Known(int arity) {
  std::string names;
  for (const ElementwiseOp& op : ElementwiseOps()) {
    if (op.arity != arity) continue;
    if (!names.empty()) names += ", ";
    names += op.name;
  }
  return names;
}

}  // namespace

std::string_view Name(UnaryOp op) { return ElementwiseOps()[static_cast<std::size_t>(op)].name; }
std::string_view Name(BinaryOp op) {
  return ElementwiseOps()[kUnaryCount + static_cast<std::size_t>(op)].name;
}

UnaryOp UnaryOpFromName(std::string_view name) {
  if (auto op = Find<UnaryOp>(name, 1)) return *op;
  throw InvalidArgument("unknown unary function \"" + std::string(name) + "\"; known: " + Known(1));
}

BinaryOp BinaryOpFromName(std::string_view name) {
  if (auto op = Find<BinaryOp>(name, 2)) return *op;
  throw InvalidArgument("unknown binary function \"" + std::string(name) +
                        "\"; known: " + Known(2));
}

bool IsUnaryOpName(std::string_view name) { return Find<UnaryOp>(name, 1).has_value(); }
bool IsBinaryOpName(std::string_view name) { return Find<BinaryOp>(name, 2).has_value(); }

}  // namespace tessera::kernels
