// Lowering of a contraction (matmul, tensordot, ...): one ContractOp (lowering.hpp).
#include "contract_op.hpp"
#include "lowering.hpp"

namespace tessera::planner {

void LowerContract(PlanContext& context, const Node& node) {
  const Node& a = *node.inputs()[0];
  const Node& b = *node.inputs()[1];
  OpInfo info;
  info.name = node.name();
  info.kind = OpKind::kContract;
  info.fused = {node.name()};
  info.tier = context.outputs.at(&node)->tier();
  info.inner_chunks = context.outputs.at(&node)->InnerChunks();
  context.state->OpenGroup(OpGroupKind::kSingle, node.name());
  context.AppendOp(
      &node,
      MakeContractOp(std::move(info), node, context.InputArray(a), context.InputArray(b),
                     context.outputs.at(&node), context.choice_spec),
      {&a, &b});
}

}  // namespace tessera::planner
