// Lowering of a fused group: one FusedOp (lowering.hpp).
#include "lowering.hpp"

namespace tessera::planner {
namespace {

OpKind KindOf(const Node& root, const NodeSet& members) {
  if (root.kind() == NodeKind::kMapBlocks) return OpKind::kMapBlocks;
  for (const Node* member : members) {
    if (member->kind() == NodeKind::kMapBlocks) return OpKind::kBlockwise;
  }
  if (members.size() == 1 && IsGenerator(root.kind())) return OpKind::kGenerate;
  return OpKind::kElementwise;
}

}  // namespace

void LowerFusedGroup(PlanContext& context, const Node& node) {
  const NodeSet members = Members(context.logical, node);
  PlanContext::GroupReads group = context.ReadsOf(members);
  OpInfo info;
  info.name = node.name();
  info.kind = KindOf(node, members);
  info.fused = std::move(group.fused);
  info.shape = node.shape();
  info.chunks = node.chunks();
  info.dtype = node.dtype();
  const std::shared_ptr<OpOutput>& output = context.outputs.at(&node);
  info.tier = output->tier();
  info.inner_chunks = output->InnerChunks();
  context.state->OpenGroup(OpGroupKind::kSingle, node.name());
  context.AppendOp(&node, context.MakeFusedOp(node, members, output, std::move(info)),
                   group.stored);
}

}  // namespace tessera::planner
