// fusion_split: fused groups within PlanOptions' limits and allowed_mem (passes.hpp).
#include <algorithm>

#include "passes.hpp"

namespace tessera::planner {
namespace {

int CountStoredInputs(const NodeSet& members) {
  NodeSet stored;
  for (const Node* member : members) {
    for (const NodePtr& input : member->inputs()) {
      if (!members.contains(input.get())) stored.insert(input.get());
    }
  }
  return static_cast<int>(stored.size());
}

// The fused, non-generator input of the group with the most members under it.
const Node* NodeToCut(const LogicalPlan& plan, const Node& root, const NodeSet& members) {
  const Node* best = nullptr;
  std::size_t best_size = 0;
  for (const Node* member : members) {
    if (member == &root || IsGenerator(member->kind())) continue;
    if (member->kind() == NodeKind::kBroadcast) continue;  // cut its input instead
    const std::size_t size = Members(plan, *member).size();
    if (size > best_size) {
      best = member;
      best_size = size;
    }
  }
  return best;
}

// The largest task projection of the group `root` computes under the current
// boundaries.
std::int64_t ProjectGroup(PlanContext& context, const Node& root) {
  return context
      .MakeFusedOp(root, Members(context.logical, root), context.ProvisionalOutput(root), {})
      ->MaxProjection();
}

}  // namespace

// A split stores the root's largest fused input as an op of its own; for memory it is
// kept only when it lowers the largest task (a split can cost more than it saves: the
// stored node's block is then written and read whole).
void FusionSplitPass(PlanContext& context) {
  LogicalPlan& plan = context.logical;
  NodeSet unsplittable;
  bool changed = true;
  while (changed) {
    changed = false;
    for (const NodePtr& node : plan.order) {
      if (!IsComputedBoundary(plan, *node) || unsplittable.contains(node.get())) continue;
      // Rechunks, reductions, ... are ops of their own kind, never fused groups.
      if (IsPlannedAlone(node->kind())) continue;
      const NodeSet members = Members(plan, *node);
      if (members.size() < 2) continue;
      const auto op = context.MakeFusedOp(*node, members, context.ProvisionalOutput(*node), {});
      const std::int64_t fused = op->MaxProjection();
      const bool over_limits = CountStoredInputs(members) > context.options.max_fused_sources ||
                               op->MaxInputBlocks() > context.options.max_fused_input_blocks;
      if (!over_limits && fused <= context.choice_spec.allowed_mem) continue;
      const Node* cut = NodeToCut(plan, *node, members);
      if (cut == nullptr) continue;
      plan.boundary.insert(cut);
      if (!over_limits &&
          std::max(ProjectGroup(context, *node), ProjectGroup(context, *cut)) >= fused) {
        plan.boundary.erase(cut);  // splitting would not help: keep the fused task
        unsplittable.insert(node.get());
        continue;
      }
      changed = true;
    }
  }
}

}  // namespace tessera::planner
