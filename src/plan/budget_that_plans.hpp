// The budget a refusal names (Finalize with a fixed allowed_mem). Internal to src/plan.
//
//   try { return FinalizedPlan(plan_at(spec, 0)); }
//   catch (const MemoryBudgetError& refused) { ThrowNamingABudgetThatPlans(refused, spec, plan_at);
//   }
//
// The memory check names what the plan as built needs: its largest task. Planned at that
// budget, the planner may choose otherwise (an intermediate's disk chunks, a reduction's
// fan-in, a fusion split follow the budget) and need more, so a user who sets the figure
// named would be refused again. The refusal is re-planned at the figure it names until a
// plan there passes (at most kMaxBudgetReplans times, each at a larger figure), and the
// error thrown names that budget: its message keeps the op refused at the user's budget
// and says which op needs the budget named where that is another.
#pragma once

#include "budget_text.hpp"
#include "smallest_budget.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/core/spec.hpp"

namespace tessera::planner {

inline constexpr int kMaxBudgetReplans = 8;

// Rethrows `refused` (the plan at `spec` refused by the memory check) naming the smallest
// figure found at which plan_at passes; `refused` as it is when it names no figure, when
// that figure plans already, or when no plan passes within kMaxBudgetReplans.
[[noreturn]] void ThrowNamingABudgetThatPlans(const MemoryBudgetError& refused, const Spec& spec,
                                              const PlanAtBudget& plan_at);

}  // namespace tessera::planner
