#include "smallest_budget.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tessera/core/byte_size.hpp"
#include "tessera/core/errors.hpp"

namespace tessera {
namespace {

// Plans at `budget` (choices made for `choice_budget`, 0: the same); null when the plan
// does not fit it.
std::shared_ptr<FinalizedPlan::State> TryBudget(const Spec& spec, std::int64_t budget,
                                                const PlanAtBudget& plan_at, int& plans,
                                                std::int64_t choice_budget = 0) {
  Spec trial = spec;
  trial.allowed_mem = budget;
  ++plans;
  try {
    return plan_at(trial, choice_budget);
  } catch (const MemoryBudgetError&) {
    return nullptr;
  }
}

std::int64_t Required(const std::shared_ptr<FinalizedPlan::State>& state) {
  return FinalizedPlan(state).required_allowed_mem();
}

// The smallest of `budgets` (ascending) that plans, bisecting; `best` plans at
// budgets[high] on entry. Budgets that plan are assumed to stay planning when raised.
std::shared_ptr<FinalizedPlan::State> SmallestTier(const Spec& spec,
                                                   const std::vector<std::int64_t>& budgets,
                                                   std::size_t high,
                                                   std::shared_ptr<FinalizedPlan::State> best,
                                                   const PlanAtBudget& plan_at, int& plans) {
  std::size_t low = 0;  // budgets below `low` do not plan
  while (low < high) {
    const std::size_t middle = low + (high - low) / 2;
    if (std::shared_ptr<FinalizedPlan::State> plan =
            TryBudget(spec, budgets[middle], plan_at, plans)) {
      best = std::move(plan);
      high = middle;
    } else {
      low = middle + 1;
    }
  }
  return best;
}

// The smallest budget in (reserved_mem, ceiling] that plans, to the byte; `best` plans
// at the ceiling on entry. Rebuilt at its own requirement until stable.
std::shared_ptr<FinalizedPlan::State> SmallestBytes(const Spec& spec,
                                                    std::shared_ptr<FinalizedPlan::State> best,
                                                    const PlanAtBudget& plan_at, int& plans) {
  // Invariant: budgets below `floor` do not plan; `best` plans and requires `bound`.
  std::int64_t floor = spec.reserved_mem + 1;
  std::int64_t bound = Required(best);
  while (floor < bound) {
    const std::int64_t middle = floor + (bound - floor) / 2;
    if (std::shared_ptr<FinalizedPlan::State> plan = TryBudget(spec, middle, plan_at, plans)) {
      bound = Required(plan);
      best = std::move(plan);
    } else {
      floor = middle + 1;
    }
  }
  // `best` was built at some budget >= bound; rebuild it at what it requires until that
  // no longer changes (the planner's choices follow the budget it is given).
  for (int round = 0; round < 8 && best->spec.allowed_mem != bound; ++round) {
    std::shared_ptr<FinalizedPlan::State> again = TryBudget(spec, bound, plan_at, plans);
    if (again == nullptr) break;
    const std::int64_t required = Required(again);
    best = std::move(again);
    bound = required;
  }
  if (best->spec.allowed_mem != bound) {
    // The planner finds no plan at `bound` itself: keep the choices it made at the larger
    // budget, which need only `bound`, and check them against it.
    std::shared_ptr<FinalizedPlan::State> kept =
        TryBudget(spec, bound, plan_at, plans, best->choice_budget);
    if (kept != nullptr) best = std::move(kept);
  }
  return best;
}

}  // namespace

std::shared_ptr<FinalizedPlan::State> PlanWithSmallestBudget(const Spec& spec,
                                                             const PlanAtBudget& plan_at) {
  const std::int64_t total_mem = spec.effective_total_mem();
  // Tiers a task may be given: those within total_mem.
  std::vector<std::int64_t> tiers;
  for (const std::int64_t tier : spec.memory_tiers) {
    if (tier <= total_mem) tiers.push_back(tier);
  }
  if (!spec.memory_tiers.empty() && tiers.empty()) {
    throw InvalidArgument("allowed_mem \"auto\": every memory tier exceeds total_mem (" +
                          format_bytes(total_mem) + "); add a tier that fits the machine");
  }
  const std::int64_t ceiling = tiers.empty() ? total_mem : tiers.back();
  const std::string ceiling_name =
      (tiers.empty() ? "total_mem (" : "the largest memory tier (") + format_bytes(ceiling) + ")";
  if (ceiling <= spec.reserved_mem) {
    throw InvalidArgument("allowed_mem \"auto\": " + ceiling_name +
                          " leaves nothing above reserved_mem (" + format_bytes(spec.reserved_mem) +
                          ") for a task");
  }
  int plans = 1;
  Spec at_ceiling = spec;
  at_ceiling.allowed_mem = ceiling;
  std::shared_ptr<FinalizedPlan::State> best;
  try {
    best = plan_at(at_ceiling, 0);
  } catch (const MemoryBudgetError& error) {
    throw MemoryBudgetError("allowed_mem \"auto\": no budget up to " + ceiling_name +
                            " runs this plan. At that budget: " + error.what());
  }
  // With tiers the budget is a tier: a budget between tiers would buy nothing (an op is
  // given a whole tier) and could only make budget-dependent steps smaller than need be.
  best = tiers.empty()
             ? SmallestBytes(spec, std::move(best), plan_at, plans)
             : SmallestTier(spec, tiers, tiers.size() - 1, std::move(best), plan_at, plans);
  best->allowed_mem_was_auto = true;
  best->budget_plans = plans;
  return best;
}

}  // namespace tessera
