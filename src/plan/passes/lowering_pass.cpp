// lowering: stored computed nodes made into ops, by kind (passes.hpp, lowering.hpp).
#include "lowering.hpp"
#include "passes.hpp"

namespace tessera::planner {

OpInfo SingleNodeInfo(const PlanContext& context, const Node& node, OpKind kind) {
  OpInfo info;
  info.name = node.name();
  info.kind = kind;
  info.fused = {node.name()};
  info.shape = node.shape();
  info.chunks = node.chunks();
  info.dtype = node.dtype();
  info.tier = context.outputs.at(&node)->tier();
  info.inner_chunks = context.outputs.at(&node)->InnerChunks();
  return info;
}

void LoweringPass(PlanContext& context) {
  const LogicalPlan& plan = context.logical;
  context.lowered = true;
  for (const NodePtr& node : plan.order) {
    if (IsComputedBoundary(plan, *node)) {
      context.outputs[node.get()] = context.MakeOutput(*node, context.ChosenTier(*node));
    }
  }
  for (const NodePtr& node : plan.order) {
    if (!IsComputedBoundary(plan, *node)) continue;
    switch (node->kind()) {
      case NodeKind::kRechunk:
        LowerRechunk(context, *node);
        break;
      case NodeKind::kReduce:
        LowerReduce(context, *node);
        break;
      case NodeKind::kContract:
        LowerContract(context, *node);
        break;
      case NodeKind::kGather:
        LowerGather(context, *node);
        break;
      case NodeKind::kReshape:
        LowerReshape(context, *node);
        break;
      default:
        LowerFusedGroup(context, *node);
        break;
    }
  }
  for (const PlanOutput& output : plan.outputs) {
    context.state->result_ops.push_back(context.op_index.at(output.node.get()));
  }
}

}  // namespace tessera::planner
