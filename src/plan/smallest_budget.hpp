// The smallest allowed_mem that runs a plan (Spec allowed_mem "auto"). Internal to
// src/plan; tessera::Finalize calls it.
//
//   auto state = PlanWithSmallestBudget(spec, [&](const Spec& trial, std::int64_t choices) {
//     return PlanBuilder(outputs, trial, options, history, choices).Build();   // may throw
//   });
//   // state->spec.allowed_mem == FinalizedPlan(state).required_allowed_mem()
//
// Budget-dependent choices (fusion splits, rechunk stages, reduction fan-in,
// contraction slabs) are made by the planner for the budget it is given, so the search
// re-plans everything at each trial budget:
//   1. plan at the ceiling, total_mem (or the largest memory tier within it); a
//      MemoryBudgetError there means nothing runs the plan, and is rethrown saying so;
//   2. without tiers, bisect bytes between reserved_mem + 1 and the best plan's
//      required_allowed_mem: a trial that plans lowers the bound to its own requirement,
//      one that throws MemoryBudgetError raises the floor; then re-plan at the best
//      plan's requirement until planning there requires exactly what it was given. Where
//      the planner's model finds no plan at that requirement (its choices at a larger
//      budget happened to need less), the same choices are kept and checked against the
//      requirement. Either way the plan's allowed_mem is its required_allowed_mem();
//   3. with Spec::memory_tiers, bisect the tiers instead: the budget is the smallest
//      tier that plans (a budget between tiers buys nothing: ops are given whole tiers).
// Other errors propagate from the first trial that throws them.
#pragma once

#include <functional>
#include <memory>

#include "finalized_plan_state.hpp"
#include "tessera/core/spec.hpp"

namespace tessera {

// Plans with trial.allowed_mem, budget-dependent choices made for `choice_budget`
// (0: trial.allowed_mem), recorded in State::choice_budget. Throws MemoryBudgetError
// when the plan does not fit.
using PlanAtBudget = std::function<std::shared_ptr<FinalizedPlan::State>(
    const Spec& trial, std::int64_t choice_budget)>;

// REQUIRES: spec.allowed_mem_is_auto(). The plan built with the smallest allowed_mem
// that passes, with allowed_mem_was_auto set and budget_plans the trials it took.
std::shared_ptr<FinalizedPlan::State> PlanWithSmallestBudget(const Spec& spec,
                                                             const PlanAtBudget& plan_at);

}  // namespace tessera
