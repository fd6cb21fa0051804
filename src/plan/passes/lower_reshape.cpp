// Lowering of a reshape: one ReshapeOp reading its input by region (lowering.hpp).
#include "lowering.hpp"
#include "reshape_op.hpp"

namespace tessera::planner {

void LowerReshape(PlanContext& context, const Node& node) {
  const Node& input = *node.inputs().front();
  context.state->OpenGroup(OpGroupKind::kSingle, node.name());
  context.AppendOp(&node,
                   std::make_shared<ReshapeOp>(
                       SingleNodeInfo(context, node, OpKind::kReshape), context.InputArray(input),
                       input.shape(), context.outputs.at(&node), context.spec.reserved_mem),
                   {&input});
}

}  // namespace tessera::planner
