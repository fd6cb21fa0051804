#include "op_lookup.hpp"

#include <optional>
#include <string>

#include "tessera/core/errors.hpp"

namespace tessera::kernels {
namespace {

constexpr int kUnaryCount = static_cast<int>(UnaryOp::kBitwiseInvert) + 1;
constexpr int kBinaryCount = static_cast<int>(BinaryOp::kBitwiseRightShift) + 1;

template <class Op, int kCount>
std::optional<Op> Find(std::string_view name) {
  for (int i = 0; i < kCount; ++i) {
    const Op op = static_cast<Op>(i);
    if (Name(op) == name) return op;
  }
  return std::nullopt;
}

template <class Op, int kCount>
std::string Known() {
  std::string names;
  for (int i = 0; i < kCount; ++i) {
    if (!names.empty()) names += ", ";
    names += Name(static_cast<Op>(i));
  }
  return names;
}

}  // namespace

UnaryOp UnaryOpFromName(std::string_view name) {
  if (auto op = Find<UnaryOp, kUnaryCount>(name)) return *op;
  throw InvalidArgument("unknown unary function \"" + std::string(name) +
                        "\"; known: " + Known<UnaryOp, kUnaryCount>());
}

BinaryOp BinaryOpFromName(std::string_view name) {
  if (auto op = Find<BinaryOp, kBinaryCount>(name)) return *op;
  throw InvalidArgument("unknown binary function \"" + std::string(name) +
                        "\"; known: " + Known<BinaryOp, kBinaryCount>());
}

bool IsUnaryOpName(std::string_view name) { return Find<UnaryOp, kUnaryCount>(name).has_value(); }
bool IsBinaryOpName(std::string_view name) {
  return Find<BinaryOp, kBinaryCount>(name).has_value();
}

}  // namespace tessera::kernels
