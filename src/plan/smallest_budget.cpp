#include "smallest_budget.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "request_cost.hpp"
#include "tessera/core/byte_size.hpp"
#include "tessera/core/errors.hpp"

namespace tessera::planner {

std::int64_t BytesMoved(const FinalizedPlan::State& state) {
  constexpr std::int64_t kMost = std::numeric_limits<std::int64_t>::max();
  std::int64_t moved = 0;
  for (const OpInfo& info : state.infos) {
    for (const std::int64_t bytes : {info.bytes_read, info.bytes_written}) {
      moved = bytes > kMost - moved ? kMost : moved + bytes;  // saturates
    }
  }
  return moved;
}

namespace {

std::int64_t Required(const std::shared_ptr<FinalizedPlan::State>& state) {
  return FinalizedPlan(state).required_allowed_mem();
}

// Each scanned budget is this fraction of the one before.
constexpr double kScanRatio = 0.75;

// Trial plans of one search; counts them.
class BudgetSearch {
 public:
  BudgetSearch(const Spec& spec, const PlanAtBudget& plan_at) : spec_(spec), plan_at_(plan_at) {}

  // The plan at `budget` (choices made for `choice_budget`, 0: the same), kept only when
  // it fits and moves no more than `io_limit_` bytes; null otherwise.
  // `refused_for_memory` (when given) says whether the planner threw MemoryBudgetError.
  std::shared_ptr<FinalizedPlan::State> Try(std::int64_t budget, std::int64_t choice_budget = 0,
                                            bool* refused_for_memory = nullptr) {
    Spec trial = spec_;
    trial.allowed_mem = budget;
    ++plans_;
    std::shared_ptr<FinalizedPlan::State> plan;
    try {
      plan = plan_at_(trial, choice_budget);
    } catch (const MemoryBudgetError&) {
      if (refused_for_memory != nullptr) *refused_for_memory = true;
      return nullptr;
    }
    if (KeepsIo(*plan)) return plan;
    if (passed_over_.allowed_mem == 0 || budget < passed_over_.allowed_mem) {
      passed_over_ = {budget, PlanRequests(plan->infos), SmallestDiskChunkBytes(plan->infos)};
    }
    return nullptr;
  }

  // What a kept plan may cost, from the plan at the ceiling: I/O within kAutoIoSlack of
  // its own, and intermediate chunks on disk no smaller than the tier serves well
  // (unless the ceiling's or the user's own chunks are smaller still).
  void SetLimits(const FinalizedPlan::State& ceiling) {
    cost_limit_ = PlanIoCost(ceiling.infos, kDirectoryRequestCost) * (1 + kAutoIoSlack);
    chunk_floor_ = kDirectoryRequestCost.chunk_floor;
    for (const std::int64_t smaller :
         {SmallestDiskChunkBytes(ceiling.infos), SmallestUserChunkBytes(ceiling.infos)}) {
      if (smaller > 0) chunk_floor_ = std::min(chunk_floor_, smaller);
    }
  }

  // The smallest of `budgets` (ascending) that Try keeps, trying each in turn (tiers
  // are few); `best` is kept at budgets.back().
  std::shared_ptr<FinalizedPlan::State> SmallestOf(const std::vector<std::int64_t>& budgets,
                                                   std::shared_ptr<FinalizedPlan::State> best) {
    for (std::size_t i = 0; i + 1 < budgets.size(); ++i) {
      if (std::shared_ptr<FinalizedPlan::State> plan = Try(budgets[i])) return plan;
    }
    return best;
  }

  // The smallest requirement of a kept plan, to the byte; `best` is kept at the ceiling.
  // The planner's choices need not grow with the budget (a rechunk layout chosen for
  // 200 MB may need 103 MB where the one chosen for 167 MB needs 142 MB), so budgets
  // are first scanned down from the ceiling by kScanRatio until one is refused for
  // memory, keeping the plan that requires least; then the budgets below its
  // requirement are bisected; then the plan is rebuilt at its own requirement.
  std::shared_ptr<FinalizedPlan::State> SmallestBytes(std::shared_ptr<FinalizedPlan::State> best) {
    std::int64_t bound = Required(best);
    std::vector<std::int64_t> rejected;  // scanned budgets whose plans were not kept
    for (std::int64_t budget = best->spec.allowed_mem; budget > spec_.reserved_mem + 1;) {
      budget = std::max(static_cast<std::int64_t>(static_cast<double>(budget) * kScanRatio),
                        spec_.reserved_mem + 1);
      bool refused_for_memory = false;
      std::shared_ptr<FinalizedPlan::State> plan = Try(budget, 0, &refused_for_memory);
      if (plan == nullptr) {
        rejected.push_back(budget);
      } else if (Required(plan) < bound) {
        bound = Required(plan);
        best = std::move(plan);
      }
      if (refused_for_memory) break;
    }
    // Invariant: `best` is kept and requires `bound`; the largest budget below `bound`
    // that was tried was not kept, and neither (assumed) are those below it. The
    // assumption is checked at the end, one byte below: a plan kept there starts the
    // bisection again below its own requirement (`bound` only falls, so this ends).
    while (true) {
      std::int64_t floor = spec_.reserved_mem + 1;
      for (const std::int64_t budget : rejected) {
        if (budget < bound) floor = std::max(floor, budget + 1);
      }
      while (floor < bound) {
        const std::int64_t middle = floor + (bound - floor) / 2;
        if (std::shared_ptr<FinalizedPlan::State> plan = Try(middle)) {
          bound = Required(plan);
          best = std::move(plan);
        } else {
          rejected.push_back(middle);
          floor = middle + 1;
        }
      }
      const std::int64_t below = bound - 1;
      if (below <= spec_.reserved_mem ||
          std::find(rejected.begin(), rejected.end(), below) != rejected.end()) {
        break;
      }
      std::shared_ptr<FinalizedPlan::State> plan = Try(below);
      if (plan == nullptr) break;
      bound = Required(plan);
      best = std::move(plan);
    }
    // `best` was built at some budget >= bound; rebuild it at what it requires until
    // that no longer changes (the planner's choices follow the budget it is given).
    for (int round = 0; round < 8 && best->spec.allowed_mem != bound; ++round) {
      std::shared_ptr<FinalizedPlan::State> again = Try(bound);
      if (again == nullptr || Required(again) > bound) break;
      const std::int64_t required = Required(again);
      best = std::move(again);
      bound = required;
    }
    if (best->spec.allowed_mem != bound) {
      // The planner makes other choices at `bound` itself: keep those it made at the
      // larger budget, which need only `bound`, and check them against it.
      if (std::shared_ptr<FinalizedPlan::State> kept = Try(bound, best->choice_budget)) {
        best = std::move(kept);
      }
    }
    return best;
  }

  int plans() const { return plans_; }
  const FinalizedPlan::State::PassedOverBudget& passed_over() const { return passed_over_; }

 private:
  bool KeepsIo(const FinalizedPlan::State& plan) const {
    if (PlanIoCost(plan.infos, kDirectoryRequestCost) > cost_limit_) return false;
    const std::int64_t smallest = SmallestDiskChunkBytes(plan.infos);
    return smallest == 0 || smallest >= chunk_floor_;
  }

  const Spec& spec_;
  const PlanAtBudget& plan_at_;
  double cost_limit_ = std::numeric_limits<double>::infinity();
  std::int64_t chunk_floor_ = 0;
  int plans_ = 0;
  FinalizedPlan::State::PassedOverBudget passed_over_;
};

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
  BudgetSearch search(spec, plan_at);
  std::shared_ptr<FinalizedPlan::State> best;
  try {
    Spec at_ceiling = spec;
    at_ceiling.allowed_mem = ceiling;
    best = plan_at(at_ceiling, 0);
  } catch (const MemoryBudgetError& error) {
    throw MemoryBudgetError("allowed_mem \"auto\": no budget up to " + ceiling_name +
                            " runs this plan. At that budget: " + error.what());
  }
  search.SetLimits(*best);
  // With tiers the budget is a tier: a budget between tiers would buy nothing (an op is
  // given a whole tier) and could only make budget-dependent steps smaller than need be.
  best = tiers.empty() ? search.SmallestBytes(std::move(best))
                       : search.SmallestOf(tiers, std::move(best));
  best->allowed_mem_was_auto = true;
  best->budget_plans = search.plans() + 1;
  if (search.passed_over().allowed_mem < best->spec.allowed_mem) {
    best->passed_over = search.passed_over();
  }
  return best;
}

}  // namespace tessera::planner
