// Lowering of a gather: one GatherOp reading its inputs by region (lowering.hpp).
#include "gather_op.hpp"
#include "lowering.hpp"
#include "node_detail.hpp"

namespace tessera::planner {

void LowerGather(PlanContext& context, const Node& node) {
  std::vector<const Node*> inputs;
  std::vector<std::shared_ptr<const StoredArray>> arrays;
  std::vector<ChunkGrid> grids;
  for (const NodePtr& input : node.inputs()) {
    inputs.push_back(input.get());
    arrays.push_back(context.InputArray(*input));
    grids.push_back(input->grid());
  }
  context.state->OpenGroup(OpGroupKind::kSingle, node.name());
  context.AppendOp(
      &node,
      std::make_shared<GatherOp>(SingleNodeInfo(context, node, OpKind::kGather),
                                 node.detail().index_map, std::move(arrays), std::move(grids),
                                 context.outputs.at(&node), context.spec.reserved_mem),
      inputs);
}

}  // namespace tessera::planner
