// Finalize: the planner's passes (passes/pass_manager.hpp) at the spec's budget, or at
// the smallest that runs (allowed_mem "auto", smallest_budget.hpp). See
// finalized_plan.hpp.
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "budget_that_plans.hpp"
#include "finalized_plan_state.hpp"
#include "passes/pass_manager.hpp"
#include "passes/plan_context.hpp"
#include "smallest_budget.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/memory/history.hpp"
#include "tessera/plan/finalized_plan.hpp"
#include "work_directory.hpp"

namespace tessera {
namespace {

// The test suite's "smallest budget" rerun (docs/testing.md): TESSERA_SMALLEST_BUDGET=1
// plans every computation as allowed_mem "auto" would, with the smallest budget that
// runs it, whatever allowed_mem the spec gives; results must not change. Read here only.
bool SmallestBudgetForced() {
  static const bool forced = [] {
    const char* value = std::getenv("TESSERA_SMALLEST_BUDGET");
    if (value == nullptr || *value == '\0' || std::string_view(value) == "0") return false;
    if (std::string_view(value) != "1") {
      throw InvalidArgument("TESSERA_SMALLEST_BUDGET must be 1 or 0, got \"" + std::string(value) +
                            "\"");
    }
    return true;
  }();
  return forced;
}

}  // namespace

namespace planner {

FinalizedPlan FinalizeInSession(const std::vector<PlanOutput>& outputs, const Spec& spec,
                                const PlanOptions& options, std::shared_ptr<PlanSession> session) {
  spec.validate();
  CheckWorkDirectoryBase(spec);  // before any work: a missing, file or unwritable work_dir
  // Opened once, to read only: planning never creates, migrates or writes history. A
  // remade plan reads the answers it was given instead.
  std::shared_ptr<HistoryDatabase> history;
  if (!session->learned_given) {
    if (const std::optional<std::filesystem::path> path = ResolveHistoryPath(spec.history)) {
      history = HistoryDatabase::OpenToRead(*path);
    }
  }
  const PassManager passes;
  passes.DisabledPasses(options);  // an unknown or required pass is refused before any work
  const auto plan_at = [&](const Spec& budget, std::int64_t choice_budget) {
    PlanContext context(outputs, budget, options, history, choice_budget, session);
    passes.Run(context);
    return context.state;
  };
  std::shared_ptr<FinalizedPlan::State> state;
  if (!spec.allowed_mem_is_auto() && !SmallestBudgetForced()) {
    try {
      state = plan_at(spec, 0);
    } catch (const MemoryBudgetError& refused) {
      ThrowNamingABudgetThatPlans(refused, spec, plan_at);
    }
  } else {
    state = PlanWithSmallestBudget(spec, plan_at);
  }
  state->requested = outputs;
  state->requested_spec = spec;
  state->requested_options = options;
  {
    const std::lock_guard lock(session->learned_mutex);
    state->learned.insert(session->learned.begin(), session->learned.end());
  }
  return FinalizedPlan(std::move(state));
}

}  // namespace planner

FinalizedPlan Finalize(const std::vector<PlanOutput>& outputs, const Spec& spec,
                       const PlanOptions& options) {
  return planner::FinalizeInSession(outputs, spec, options,
                                    std::make_shared<planner::PlanSession>());
}

}  // namespace tessera
