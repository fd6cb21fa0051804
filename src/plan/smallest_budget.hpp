// The smallest allowed_mem that runs a plan (Spec allowed_mem "auto"). Internal to
// src/plan; tessera::Finalize calls it.
//
//   auto state = PlanWithSmallestBudget(spec, [&](const Spec& trial, std::int64_t choices) {
//     PlanContext context(outputs, trial, options, history, choices);
//     PassManager().Run(context);   // may throw
//     return context.state;
//   });
//   // without tiers, state->spec.allowed_mem == FinalizedPlan(state).required_allowed_mem()
//   // (unless the planner's choices at the requirement move too much, below); with
//   // tiers, state->spec.allowed_mem is the tier chosen, at or above the requirement
//
// Budget-dependent choices (fusion splits, rechunk stages, reduction fan-in,
// contraction slabs) are made by the planner for the budget it is given, so the search
// re-plans everything at each trial budget. The smallest budget is not always a good
// one: a rechunk planned at its very least may decode its source hundreds of times over,
// or cut its intermediate into hundreds of millions of 12 KB chunks (ERA5: 237,824,287
// requests at 295.7 MB, 994,183 at 2.5 GB). So a trial budget is kept only when its
// plan's I/O cost (decoded bytes read and written, plus each request at its tier's
// price: request_cost.hpp) is at most kAutoIoSlack above the plan at the ceiling's, and
// its intermediate chunks on disk are no smaller than the tier serves well
// (RequestCost::chunk_floor, or the ceiling plan's or the user's own chunks where those
// are smaller). The smallest budget passed over is kept in State::passed_over, for
// --plan to say what it would have cost:
//   1. plan at the ceiling, total_mem (or the largest memory tier within it); a
//      MemoryBudgetError there means nothing runs the plan, and is rethrown saying so;
//   2. without tiers: the planner's choices need not grow with the budget (a rechunk
//      layout chosen for 200 MB may need less than the one chosen for 167 MB), so
//      budgets are scanned down from the ceiling in steps of x0.75 until one is refused
//      for memory, keeping the plan that requires least; the bytes below its
//      requirement are then bisected (a kept trial lowers the bound to its own
//      requirement, any other raises the floor); then the plan is rebuilt at its
//      requirement until planning there requires exactly what it was given. Where the
//      planner makes other choices at that requirement, the choices made at the larger
//      budget are kept and checked against it, so the plan's allowed_mem is its
//      required_allowed_mem() (should even that be rejected, the plan built at the
//      larger budget is returned as it is). The bisection assumes budgets below a
//      rejected one are rejected too; one byte below the result is checked (a plan kept
//      there restarts the bisection below it), but lower ones are not: the budget is
//      the smallest found, not proven the smallest;
//   3. with Spec::memory_tiers, the tiers are tried from the smallest: the budget is the
//      first tier kept (a budget between tiers buys nothing: ops are given whole tiers).
// Other errors propagate from the first trial that throws them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "finalized_plan_state.hpp"
#include "tessera/core/spec.hpp"

namespace tessera::planner {

// Plans with trial.allowed_mem, budget-dependent choices made for `choice_budget`
// (0: trial.allowed_mem), recorded in State::choice_budget. Throws MemoryBudgetError
// when the plan does not fit.
// How much more I/O a plan chosen by the search may cost than the plan at the ceiling.
inline constexpr double kAutoIoSlack = 0.10;

// The bytes a plan's ops read and write (decoded): OpInfo::bytes_read + bytes_written.
std::int64_t BytesMoved(const FinalizedPlan::State& state);

using PlanAtBudget = std::function<std::shared_ptr<FinalizedPlan::State>(
    const Spec& trial, std::int64_t choice_budget)>;

// REQUIRES: spec.allowed_mem_is_auto(). The plan built with the smallest allowed_mem
// that passes, with allowed_mem_was_auto set and budget_plans the trials it took.
std::shared_ptr<FinalizedPlan::State> PlanWithSmallestBudget(const Spec& spec,
                                                             const PlanAtBudget& plan_at);

}  // namespace tessera::planner
