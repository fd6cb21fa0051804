// tiers: RAM for intermediates while they fit, disk after (passes.hpp).
#include "passes.hpp"

namespace tessera::planner {

void TierPass(PlanContext& context) {
  const LogicalPlan& plan = context.logical;
  context.ram_for_intermediates = context.IntermediateBudget();
  // In plan order: RAM while the intermediates so far fit.
  for (const NodePtr& node : plan.order) {
    if (!IsComputedBoundary(plan, *node)) continue;
    Tier tier = context.TierAlone(*node);
    if (context.options.intermediate_tier == Tier::kNone && tier == Tier::kMemory) {
      if (context.in_memory + node->nbytes() > context.ram_for_intermediates) {
        tier = Tier::kDisk;
      } else {
        context.in_memory += node->nbytes();
      }
    }
    // (A requested output goes to the result or its target whatever the tier: the RAM
    // above is counted all the same, as it always has been.)
    for (const PlanOutput& output : plan.outputs) {
      if (output.node == node) tier = output.target ? Tier::kTarget : Tier::kResult;
    }
    context.logical.tiers[node.get()] = tier;
  }
}

}  // namespace tessera::planner
