// The planner's passes, one entry point each, in the order the pass manager runs them
// (pass_manager.cpp). Each takes the plan being built and changes it in place; each is
// defined in the file of its name. Internal to src/plan.
#pragma once

#include "plan_context.hpp"

namespace tessera::planner {

// ---- logical: on PlanContext::logical ---------------------------------------------
// prune: the nodes the requested outputs need, in dependency order (required).
void PrunePass(PlanContext& context);
// rechunk_of_rechunk: a rechunk of a rechunk reads the first one's input: one shuffle,
// not two (and none when it lands on the input's own grid).
void RechunkOfRechunkPass(PlanContext& context);
// power_by_constant: x ** c for a constant c with a cheaper exact form, as numpy's power
// does: x ** 2 == square(x), x ** 0.5 == sqrt(x), x ** -1 == 1 / x, x ** 1 == x
// (floating point only). libm's pow costs ~10x a division.
void PowerByConstantPass(PlanContext& context);
// boundaries: every node that must be stored without fusion: sources, outputs and every
// computed node but generators (required).
void BoundariesPass(PlanContext& context);
// fusion: stores only what must be (nodes read by several ops or on another grid, ops
// planned alone); the rest is computed inside its reader's task.
void FusionPass(PlanContext& context);
// fusion_split: splits fused groups until each respects PlanOptions' limits and fits
// allowed_mem (off: fused groups are kept whole, and may be refused for memory).
void FusionSplitPass(PlanContext& context);
// tiers: where each stored intermediate lives: RAM while the intermediates so far fit
// what total_mem leaves, local disk after (off: disk, unless PlanOptions forces a tier).
void TierPass(PlanContext& context);

// ---- physical: on PlanContext::state ------------------------------------------------
// lowering: every stored computed node made into ops, in plan order, by its kind
// (lowering.hpp) (required).
void LoweringPass(PlanContext& context);
// fingerprint: every op's fingerprint for history, and each target's writer layout
// (required).
void FingerprintPass(PlanContext& context);
// history: what earlier runs measured for each op's fingerprint (off: as with no
// history database).
void HistoryPass(PlanContext& context);
// estimates: what the plan counts per task (projection, or history's larger figure),
// concurrency and task seconds (required).
void EstimatePass(PlanContext& context);
// memory_check: every task of every op within allowed_mem, and forced RAM intermediates
// within total_mem; MemoryBudgetError otherwise (required).
void MemoryCheckPass(PlanContext& context);
// memory_sizes: every op's memory size and cost (op_cost.hpp) (required).
void MemorySizePass(PlanContext& context);

}  // namespace tessera::planner
