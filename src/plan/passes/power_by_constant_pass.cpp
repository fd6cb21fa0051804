// power_by_constant: x ** c by its cheaper exact form (passes.hpp).
#include <unordered_map>

#include "kernels/op_lookup.hpp"
#include "node_detail.hpp"
#include "passes.hpp"

namespace tessera::planner {
namespace {

// The constant exponent of pow node `power`, as it was written (before its cast to the
// dtype pow computes in), or nullptr.
const Node* ConstantExponent(const Node& power) {
  const Node* exponent = power.inputs()[1].get();
  if (exponent->kind() == NodeKind::kAsType) exponent = exponent->inputs().front().get();
  return exponent->kind() == NodeKind::kConstant ? exponent : nullptr;
}

// The cheaper form of `power` (a pow node), or null when it has none.
NodePtr PowerByConstant(const Node& power) {
  const NodePtr& base = power.inputs()[0];  // cast to the dtype pow computes in already
  // Only a base of the result's own shape: a broadcast base stays broadcast in pow.
  if (base->kind() == NodeKind::kBroadcast) return nullptr;
  const DType dtype = base->dtype();
  const Node* exponent = ConstantExponent(power);
  if (exponent == nullptr || dtype.kind() != DTypeKind::kFloat || power.dtype() != dtype) {
    return nullptr;
  }
  const double value = exponent->detail().constant.As<double>();
  if (value == 1) return MakeAsType(base, dtype);
  if (value == 2) return MakeUnary("square", base);
  if (value == 0.5) return MakeUnary("sqrt", base);
  if (value == -1) {
    NodePtr one = MakeConstant(base->shape(), Scalar(1), dtype, base->chunks());
    return MakeBinary("divide", std::move(one), base);
  }
  return nullptr;
}

}  // namespace

void PowerByConstantPass(PlanContext& context) {
  std::unordered_map<const Node*, NodePtr> replaced;
  for (const NodePtr& node : context.logical.order) {
    if (node->kind() != NodeKind::kBinary ||
        kernels::BinaryOpFromName(node->op()) != kernels::BinaryOp::kPow) {
      continue;
    }
    if (NodePtr faster = PowerByConstant(*node)) replaced[node.get()] = std::move(faster);
  }
  ReplaceNodes(context.logical, replaced);
}

}  // namespace tessera::planner
