// history: what earlier runs measured for each op (passes.hpp).
#include "passes.hpp"

namespace tessera::planner {

void HistoryPass(PlanContext& context) {
  if (!context.ReadsHistory()) return;
  for (std::size_t i = 0; i < context.state->ops.size(); ++i) {
    const OpInfo& info = context.state->ops[i].info();
    if (std::optional<LearnedFootprint> learned = context.Learned(info.fingerprint)) {
      context.learned[static_cast<int>(i)] = *learned;
    }
  }
}

}  // namespace tessera::planner
