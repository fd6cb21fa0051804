#include "budget_that_plans.hpp"

#include <string>

#include "tessera/core/byte_size.hpp"

namespace tessera::planner {

void ThrowNamingABudgetThatPlans(const MemoryBudgetError& refused, const Spec& spec,
                                 const PlanAtBudget& plan_at) {
  const std::int64_t named = refused.required_allowed_mem();
  if (named <= spec.allowed_mem) throw refused;
  std::int64_t budget = named;
  std::string needs_most;  // the op refused at the last figure tried
  for (int replan = 0; replan < kMaxBudgetReplans; ++replan) {
    Spec trial = spec;
    trial.allowed_mem = budget;
    try {
      plan_at(trial, 0);
    } catch (const MemoryBudgetError& again) {
      if (again.required_allowed_mem() <= budget) throw refused;  // refused for another reason
      budget = again.required_allowed_mem();
      const std::string what = again.what();
      const std::size_t op = what.find("in op \"");
      needs_most =
          op == std::string::npos ? "" : what.substr(op + 7, what.find('"', op + 7) - op - 7);
      continue;
    } catch (const Error&) {
      throw refused;  // the larger budget is invalid for the spec (above total_mem, ...)
    }
    if (budget == named) throw refused;
    std::string message = refused.what();
    const std::string said = SmallestBudgetText(named);
    const std::size_t at = message.find(said);
    if (at == std::string::npos) throw refused;
    message.replace(at, said.size(),
                    SmallestBudgetText(budget) + " (planned at that budget the plan chooses " +
                        "other chunks, stages or rounds" +
                        (needs_most.empty() ? std::string()
                                            : ", and op \"" + needs_most + "\" needs the most") +
                        ")");
    throw MemoryBudgetError(message, budget);
  }
  throw refused;
}

}  // namespace tessera::planner
